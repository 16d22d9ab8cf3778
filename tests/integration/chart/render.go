// render.go - renders a Helm chart's templates the way Helm does (Go
// text/template + Sprig + Helm's include/tpl/toYaml/fromYaml/fromJsonArray/
// required/lookup), without a cluster or the helm binary, so that the chart
// can be tested offline.  Test-only; lookup always finds nothing.
//
//	go run render.go CHART_DIR RELEASE NAMESPACE [key=value ...]
//
// Values "a.b=c" override values.yaml (c is parsed as YAML).  Prints every
// rendered manifest as "# Source: <file>" followed by its text.  With
// $RENDER_EXTRA=FILE that template is rendered too (tests use the chart's
// helpers through it).
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: render CHART RELEASE NAMESPACE [key=value ...]")
		os.Exit(2)
	}
	dir, release, ns := os.Args[1], os.Args[2], os.Args[3]
	values := map[string]interface{}{}
	chart := map[string]interface{}{}
	must(readYAML(filepath.Join(dir, "values.yaml"), &values))
	must(readYAML(filepath.Join(dir, "Chart.yaml"), &chart))
	for _, kv := range os.Args[4:] {
		k, v, _ := strings.Cut(kv, "=")
		var parsed interface{}
		must(yaml.Unmarshal([]byte(v), &parsed))
		setPath(values, strings.Split(k, "."), parsed)
	}
	top := map[string]interface{}{
		"Values":       values,
		"Chart":        map[string]interface{}{"Name": chart["name"], "Version": chart["version"], "AppVersion": chart["appVersion"]},
		"Release":      map[string]interface{}{"Name": release, "Namespace": ns, "Service": "Helm", "IsInstall": true},
		"Capabilities": map[string]interface{}{},
	}

	root := template.New("chart")
	funcs := sprig.TxtFuncMap()
	funcs["include"] = func(name string, data interface{}) (string, error) {
		var b bytes.Buffer
		err := root.ExecuteTemplate(&b, name, data)
		return b.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var b bytes.Buffer
		err = t.Execute(&b, data)
		return b.String(), err
	}
	funcs["toYaml"] = func(v interface{}) string {
		b, err := yaml.Marshal(v)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(b), "\n")
	}
	funcs["fromYaml"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	funcs["fromJsonArray"] = func(s string) []interface{} {
		var a []interface{}
		if err := yaml.Unmarshal([]byte(s), &a); err != nil {
			return []interface{}{err.Error()}
		}
		return a
	}
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil || v == "" {
			return v, fmt.Errorf("%s", msg)
		}
		return v, nil
	}
	funcs["lookup"] = func(string, string, string, string) map[string]interface{} { return map[string]interface{}{} }
	root.Funcs(funcs).Option("missingkey=zero")

	files, err := filepath.Glob(filepath.Join(dir, "templates", "*"))
	must(err)
	sort.Strings(files)
	// $RENDER_EXTRA: one more template (a test's), rendered after the chart's.
	if extra := os.Getenv("RENDER_EXTRA"); extra != "" {
		files = append(files, extra)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		must(err)
		_, err = root.New(filepath.Join("templates", filepath.Base(f))).Parse(string(text))
		must(err)
	}
	for _, f := range files {
		name := filepath.Join("templates", filepath.Base(f))
		if strings.HasPrefix(filepath.Base(f), "_") || strings.HasSuffix(f, ".txt") {
			continue
		}
		var b bytes.Buffer
		if err := root.ExecuteTemplate(&b, name, top); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("---\n# Source: %s\n%s\n", name, b.String())
	}
}

func readYAML(path string, out interface{}) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(b, out)
}

func setPath(m map[string]interface{}, path []string, v interface{}) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
