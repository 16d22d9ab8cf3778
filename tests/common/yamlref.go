// yamlref: the reference for wh_yaml.  `yamlref load` prints the JSON that
// sigs.k8s.io/yaml makes of each YAML document on stdin (one per line);
// `yamlref dump` prints the YAML that sigs.k8s.io/yaml makes of the JSON on
// stdin.  Test-only: built offline from Debian's Go packages.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "load":
		for _, doc := range bytes.Split(in, []byte("\n---\n")) {
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				fmt.Println("ERROR")
				continue
			}
			fmt.Println(string(j))
		}
	case "dump":
		y, err := yaml.JSONToYAML(in)
		if err != nil {
			fmt.Println("ERROR")
			os.Exit(0)
		}
		os.Stdout.Write(y)
	}
}
