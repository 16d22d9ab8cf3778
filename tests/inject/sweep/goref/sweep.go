// Command sweep-goref is the Go side of the template-version sweep: istiod's
// engine (text/template, Sprig, Istio's helpers and template data from
// shared/tools/istio-render-bench, whose files the build links in next to
// this one) rendering one injection template for one pod.
//
// Input (file named by the first argument): a JSON array of cases
//
//	{"name", "templates": ["<text>", ...], "values": {...}, "mesh": "<mesh.yaml text>",
//	 "pod": {...}, "typeMeta": {...},
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

// proxyConfigFor is the mesh's default proxy config with the pod's
// proxy.istio.io/config annotation applied the way istiod applies it
// (jsonpb onto the default): a message field the annotation names is
// replaced whole, a map field is merged key by key, a list field is
// appended to, any other field is replaced.
func proxyConfigFor(mesh *MeshConfig, annotations map[string]string) (*ProxyConfig, error) {
	js, err := json.Marshal(mesh.DefaultConfig)
	if err != nil {
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(js, &fields); err != nil {
		return nil, err
	}
	if text, ok := annotations["proxy.istio.io/config"]; ok {
		over, err := yaml.YAMLToJSON([]byte(text))
		if err != nil {
			return nil, fmt.Errorf("proxy.istio.io/config: %v", err)
		}
		var set map[string]json.RawMessage
		if err := json.Unmarshal(over, &set); err != nil {
			return nil, fmt.Errorf("proxy.istio.io/config: %v", err)
		}
		for k, v := range set {
			old, had := fields[k]
			var om, nm map[string]interface{}
			var ol, nl []interface{}
			switch {
			case had && (k == "proxyMetadata" || k == "runtimeValues") &&
				json.Unmarshal(old, &om) == nil && json.Unmarshal(v, &nm) == nil:
				for mk, mv := range nm {
					om[mk] = mv
				}
				fields[k], _ = json.Marshal(om)
			case had && json.Unmarshal(old, &ol) == nil && json.Unmarshal(v, &nl) == nil:
				fields[k], _ = json.Marshal(append(ol, nl...))
			default:
				fields[k] = v
			}
		}
	}
	merged, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	pc := &ProxyConfig{}
	if err := json.Unmarshal(merged, pc); err != nil {
		return nil, fmt.Errorf("proxy config: %v", err)
	}
	return pc, nil
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
	var pod Pod
	if err := json.Unmarshal(c.Pod, &pod); err != nil {
		return nil, fmt.Errorf("pod: %v", err)
	}
	pc, err := proxyConfigFor(mesh, pod.ObjectMeta.Annotations)
	if err != nil {
		return nil, err
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
