// Command goref is the test-only reference for webhookd's template engine:
// Go's own text/template with Sprig (and Helm's toYaml/fromYaml/include/tpl/
// required), run over a batch of cases so the C engine can be compared with
// the real thing. Input: a JSON array of {"name","template","data","options"}
// on the file named by the first argument; output: a JSON array of
// {"name","out","err"} on stdout.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/ioutil"
	"os"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
)

type testCase struct {
	Name     string          `json:"name"`
	Template string          `json:"template"`
	Data     json.RawMessage `json:"data"`
	Options  []string        `json:"options"`
	Helm     bool            `json:"helm"`
}

type result struct {
	Name string  `json:"name"`
	Out  string  `json:"out"`
	Err  *string `json:"err"`
}

func helmFuncs(root **template.Template) template.FuncMap {
	return template.FuncMap{
		"toYaml": func(v interface{}) string {
			data, err := yaml.Marshal(v)
			if err != nil {
				return ""
			}
			return strings.TrimSuffix(string(data), "\n")
		},
		"fromYaml": func(str string) map[string]interface{} {
			m := map[string]interface{}{}
			if err := yaml.Unmarshal([]byte(str), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
		"fromYamlArray": func(str string) []interface{} {
			a := []interface{}{}
			if err := yaml.Unmarshal([]byte(str), &a); err != nil {
				a = []interface{}{err.Error()}
			}
			return a
		},
		"fromJsonArray": func(str string) []interface{} {
			a := []interface{}{}
			if err := json.Unmarshal([]byte(str), &a); err != nil {
				a = []interface{}{err.Error()}
			}
			return a
		},
		"required": func(warn string, val interface{}) (interface{}, error) {
			if val == nil {
				return val, errors.New(warn)
			} else if _, ok := val.(string); ok {
				if val == "" {
					return val, errors.New(warn)
				}
			}
			return val, nil
		},
		"include": func(name string, data interface{}) (string, error) {
			var buf strings.Builder
			if err := (*root).ExecuteTemplate(&buf, name, data); err != nil {
				return "", err
			}
			return buf.String(), nil
		},
		"tpl": func(text string, vals map[string]interface{}) (string, error) {
			t, err := (*root).Clone()
			if err != nil {
				return "", err
			}
			t, err = t.New((*root).Name()).Parse(text)
			if err != nil {
				return "", err
			}
			var buf strings.Builder
			if err := t.ExecuteTemplate(&buf, (*root).Name(), vals); err != nil {
				return "", err
			}
			return buf.String(), nil
		},
	}
}

func run(c testCase) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	var data interface{}
	if len(c.Data) > 0 {
		if err := json.Unmarshal(c.Data, &data); err != nil {
			return "", fmt.Errorf("bad data: %v", err)
		}
	}
	var root *template.Template
	t := template.New(c.Name).Funcs(sprig.TxtFuncMap())
	if c.Helm {
		t = t.Funcs(helmFuncs(&root))
	}
	t = t.Option(c.Options...)
	if _, err := t.Parse(c.Template); err != nil {
		return "", err
	}
	root = t
	var buf bytes.Buffer
	err = t.Execute(&buf, data)
	return buf.String(), err
}

func main() {
	raw, err := ioutil.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var cases []testCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		out, err := run(c)
		r := result{Name: c.Name, Out: out}
		if err != nil {
			s := err.Error()
			r.Err = &s
		}
		results = append(results, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
