// Command sweep-goref is the Go side of the template-version sweep: istiod's
// engine (text/template, Sprig, Istio's helpers and template data from
// shared/tools/istio-render-bench, whose files the build links in next to
// this one) rendering one injection template for one pod.
//
// Input (file named by the first argument): a JSON array of cases
//
//	{"name", "templates": ["<text>", ...], "values": {...}, "mesh": "<mesh.yaml text>",
//	 "pod": {...}, "proxyConfig": {...}, "typeMeta": {...},
//	 "deploymentMeta": {"Namespace", "Name"}, "revision", "native",
//	 "concurrency"}
//
// Output on stdout: a JSON array of {"name", "overlays", "err"}, one overlay
// per template (in order), each the rendered YAML decoded the way istiod
// decodes it (YAML -> JSON); err is the first error.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/ioutil"
	"os"

	"sigs.k8s.io/yaml"
)

type sweepCase struct {
	Name           string          `json:"name"`
	Templates      []string        `json:"templates"`
	Values         json.RawMessage `json:"values"`
	Mesh           string          `json:"mesh"`
	Pod            json.RawMessage `json:"pod"`
	ProxyConfig    json.RawMessage `json:"proxyConfig"`
	TypeMeta       TypeMeta        `json:"typeMeta"`
	DeploymentMeta NamespacedName  `json:"deploymentMeta"`
	Revision       string          `json:"revision"`
	Native         bool            `json:"native"`
	Concurrency    int             `json:"concurrency"`
}

type sweepResult struct {
	Name     string        `json:"name"`
	Overlays []interface{} `json:"overlays"`
	Err      string        `json:"err,omitempty"`
}

// sweepData is SidecarTemplateData plus the fields older istiod versions
// handed their templates.
type sweepData struct {
	SidecarTemplateData
	EstimatedConcurrency int
}

func render(c *sweepCase) ([]interface{}, error) {
	var values map[string]interface{}
	if err := yaml.Unmarshal(c.Values, &values); err != nil {
		return nil, fmt.Errorf("values: %v", err)
	}
	mesh, err := applyMeshConfig([]byte(c.Mesh))
	if err != nil {
		return nil, err
	}
	pc := &ProxyConfig{}
	if err := json.Unmarshal(c.ProxyConfig, pc); err != nil {
		return nil, fmt.Errorf("proxyConfig: %v", err)
	}
	var pod Pod
	if err := json.Unmarshal(c.Pod, &pod); err != nil {
		return nil, fmt.Errorf("pod: %v", err)
	}
	data := &sweepData{
		SidecarTemplateData: SidecarTemplateData{
			TypeMeta:                 c.TypeMeta,
			DeploymentMeta:           c.DeploymentMeta,
			ObjectMeta:               pod.ObjectMeta,
			Spec:                     pod.Spec,
			ProxyConfig:              pc,
			MeshConfig:               mesh,
			Values:                   values,
			Revision:                 c.Revision,
			NativeSidecars:           c.Native,
			ProxyImage:               proxyImage(values, pc.Image, pod.ObjectMeta.Annotations),
			ProxyInitImage:           proxyInitImage(values, pod.ObjectMeta.Annotations),
			ProxyUID:                 1337,
			ProxyGID:                 1337,
			InboundTrafficPolicyMode: inboundTrafficPolicyMode(mesh),
		},
		EstimatedConcurrency: c.Concurrency,
	}
	overlays := []interface{}{}
	for _, text := range c.Templates {
		tmpl, err := parseTemplate("inject", text)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, data); err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSON(buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("rendered YAML: %v", err)
		}
		var overlay interface{}
		if err := json.Unmarshal(js, &overlay); err != nil {
			return nil, err
		}
		overlays = append(overlays, overlay)
	}
	return overlays, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sweep-goref CASES.json")
		os.Exit(2)
	}
	in, err := ioutil.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var cases []sweepCase
	if err := json.Unmarshal(in, &cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	results := make([]sweepResult, 0, len(cases))
	for i := range cases {
		r := sweepResult{Name: cases[i].Name}
		if ov, err := render(&cases[i]); err != nil {
			r.Err = err.Error()
		} else {
			r.Overlays = ov
		}
		results = append(results, r)
	}
	out, _ := json.Marshal(results)
	os.Stdout.Write(append(out, '\n'))
}
