#!/usr/bin/env bash
# test_completion.sh - the scripts of `webhookctl completion bash|zsh|fish`
# load in their shell and complete real command lines through
# `webhookctl __complete` (cli.yaml checks __complete's answers themselves).
# WEBHOOKCTL names the binary; zsh and fish are skipped, saying so, when not
# installed (scripts/deps.sh test installs them).
set -uo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$(readlink -f "$WEBHOOKCTL")" "$dir/webhookctl"
export PATH="$dir:$PATH"
mkdir "$dir/files" && touch "$dir/files/pod.yaml" "$dir/files/pod2.yaml"
failures=0
expect() { # name, got, want
  if [ "$2" = "$3" ]; then
    echo "ok   $1"
  else
    printf 'FAIL %s\n     got:  %q\n     want: %q\n' "$1" "$2" "$3"
    failures=$((failures + 1))
  fi
}

# ---- bash: the issue's check, then completion as readline would call it
out=$(bash -c 'source <(webhookctl completion bash) && complete -p webhookctl' 2>&1)
expect "bash: complete -p webhookctl" "$out" "complete -F __webhookctl_complete webhookctl"
bash_complete() { # the line up to the cursor, bash's words (COMP_WORDBREAKS splits at '=')
  local line=$1
  shift
  bash -c 'compopt() { :; }
           source <(webhookctl completion bash)
           COMP_LINE=$1; COMP_POINT=${#1}; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
           cd "$0" && __webhookctl_complete && echo "${COMPREPLY[*]}"' "$dir/files" "$line" "$@"
}
expect "bash: webhookctl ta" "$(bash_complete "webhookctl ta" webhookctl ta)" "tag"
expect "bash: webhookctl tag " "$(bash_complete "webhookctl tag " webhookctl tag "")" "set generate list remove"
expect "bash: webhookctl tag list -o " "$(bash_complete "webhookctl tag list -o " webhookctl tag list -o "")" \
  "table json yaml"
expect "bash: webhookctl check --output=y" \
  "$(bash_complete "webhookctl check --output=y" webhookctl check --output = y)" "yaml"
expect "bash: webhookctl kube-inject -f pod" \
  "$(bash_complete "webhookctl kube-inject -f pod" webhookctl kube-inject -f pod)" "pod.yaml pod2.yaml"
expect "bash: webhookctl check-inject --l" \
  "$(bash_complete "webhookctl check-inject --l" webhookctl check-inject --l)" "--labels"

# ---- zsh: the script registers itself with compinit; _describe/_files stubbed to show what it offers
if command -v zsh >/dev/null; then
  out=$(zsh -f -c 'autoload -U compinit && compinit -u -D && source <(webhookctl completion zsh) && print -r -- $_comps[webhookctl]' 2>&1)
  expect "zsh: compdef registers _webhookctl" "$out" "_webhookctl"
  zsh_complete() { # words..., the last under the cursor
    zsh -f -c 'compdef() { : }
               source <(webhookctl completion zsh)
               _describe() { local n=$4; print -r -- "describe ${(@P)n}${5:+ $5 $6}" }
               _files() { print -r -- files }
               words=("$@"); CURRENT=$#
               _webhookctl' zsh "$@"
  }
  expect "zsh: webhookctl ta" "$(zsh_complete webhookctl ta)" \
    "describe tag:Create, list and remove revision tags (aliases of control plane revisions)"
  expect "zsh: webhookctl check -o " "$(zsh_complete webhookctl check -o "")" "describe table json yaml"
  expect "zsh: webhookctl validate -f " "$(zsh_complete webhookctl validate -f "")" "files"
else
  echo "skip zsh: not installed (scripts/deps.sh test installs it)"
fi

# ---- fish: `complete -C` completes a command line with the loaded script
if command -v fish >/dev/null; then
  fish_complete() {
    (cd "$dir/files" && fish --no-config -c 'webhookctl completion fish | source; complete -C $argv[1]' "$1")
  }
  expect "fish: webhookctl ta" "$(fish_complete "webhookctl ta")" \
    "$(printf 'tag\tCreate, list and remove revision tags (aliases of control plane revisions)')"
  expect "fish: webhookctl tag list -o " "$(fish_complete "webhookctl tag list -o ")" "$(printf 'json\ntable\nyaml')"
  expect "fish: webhookctl kube-inject -f pod" "$(fish_complete "webhookctl kube-inject -f pod")" \
    "$(printf 'pod.yaml\npod2.yaml')"
else
  echo "skip fish: not installed (scripts/deps.sh test installs it)"
fi
echo "$failures failed"
[ "$failures" = 0 ]
