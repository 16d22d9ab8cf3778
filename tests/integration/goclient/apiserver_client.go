// apiserver_client.go - calls webhookd the way the kube-apiserver calls an
// admission webhook: Go's TLS stack verifying the service name against the
// CA bundle, ALPN "http/1.1" only (kubernetes#82090), a keep-alive pool of 25
// idle connections per host (client-go), POST with ?timeout=Ns, concurrent
// requests; each answer must be an AdmissionReview of the same apiVersion
// with the request's uid.  Test-only, Go standard library only.
//
//	go run apiserver_client.go -url https://127.0.0.1:PORT/validate -ca ca.crt -server-name NAME -n 400 -c 16
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "", "webhook URL")
	caFile := flag.String("ca", "", "CA bundle (PEM)")
	serverName := flag.String("server-name", "", "name to verify, as the apiserver uses <svc>.<ns>.svc")
	n := flag.Int("n", 200, "requests")
	c := flag.Int("c", 8, "concurrent callers")
	flag.Parse()

	ca, err := os.ReadFile(*caFile)
	if err != nil {
		fail("%v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		fail("no certificate in %s", *caFile)
	}
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, ServerName: *serverName, NextProtos: []string{"http/1.1"}},
			MaxIdleConnsPerHost: 25,
			ForceAttemptHTTP2:   false,
		},
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	errors := 0
	protos := map[string]int{}
	jobs := make(chan int)
	for w := 0; w < *c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				version := "admission.k8s.io/v1"
				if i%2 == 1 {
					version = "admission.k8s.io/v1beta1"
				}
				proto, err := call(client, *url+"?timeout=10s", version, fmt.Sprintf("go-%d", i))
				mu.Lock()
				if err != nil {
					errors++
					fmt.Fprintln(os.Stderr, err)
				} else {
					protos[proto]++
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < *n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	fmt.Printf("ok=%d errors=%d protocols=%v\n", *n-errors, errors, protos)
	if errors != 0 || protos["HTTP/1.1"] != *n {
		os.Exit(1)
	}
}

func call(client *http.Client, url, version, uid string) (string, error) {
	review := map[string]interface{}{
		"apiVersion": version, "kind": "AdmissionReview",
		"request": map[string]interface{}{
			"uid": uid, "operation": "CREATE", "namespace": "default",
			"kind":     map[string]string{"group": "networking.istio.io", "version": "v1", "kind": "DestinationRule"},
			"resource": map[string]string{"group": "networking.istio.io", "version": "v1", "resource": "destinationrules"},
			"object": map[string]interface{}{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
				"metadata": map[string]string{"name": "r", "namespace": "default"},
				"spec":     map[string]interface{}{"host": "reviews"}},
		},
	}
	body, _ := json.Marshal(review)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("%s: HTTP %d: %s", uid, resp.StatusCode, data)
	}
	var out struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Response   *struct {
			UID     string `json:"uid"`
			Allowed *bool  `json:"allowed"`
		} `json:"response"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return "", fmt.Errorf("%s: %v: %s", uid, err, data)
	}
	if out.APIVersion != version || out.Kind != "AdmissionReview" || out.Response == nil || out.Response.UID != uid ||
		out.Response.Allowed == nil {
		return "", fmt.Errorf("%s: wrong review: %s", uid, data)
	}
	return resp.Proto, nil
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
