/*
 * completion.c - `webhookctl completion bash|zsh|fish`: the shell scripts
 * that load webhookctl's completion, in cobra's style (kubectl and istioctl
 * users load them the same way).
 *
 * The scripts hold no command or flag names: at each <Tab> they ask
 * `webhookctl __complete WORD... CURRENT` (wh_ctl_complete() in
 * wh_ctl_flags.c), which walks the same command tree and flag tables the
 * parser and --help use, so a new command or flag completes without touching
 * this file.  Its answer is one candidate a line ("value<TAB>description"),
 * then ":<directive>": 2 = no space after the candidate, 4 = no file names
 * when nothing fits (WH_CTL_COMP_*).
 */
#include <stdio.h>
#include <string.h>

#include "wh_ctl.h"

static const char bash_script[] =
    "# bash completion for webhookctl.  Load it with\n"
    "#     source <(webhookctl completion bash)\n"
    "# Candidates come from `webhookctl __complete WORD... CURRENT`; its last line\n"
    "# is \":<directive>\" (2: no space after the candidate, 4: no file names).\n"
    "__webhookctl_complete() {\n"
    "    local line=${COMP_LINE:0:COMP_POINT} cur out directive cand word\n"
    "    local -a words\n"
    "    read -r -a words <<<\"$line\"\n"
    "    cur=\"\"\n"
    "    if [[ ${#words[@]} -gt 1 && $line != *[[:space:]] ]]; then\n"
    "        cur=${words[-1]}\n"
    "        unset 'words[-1]'\n"
    "    fi\n"
    "    out=$(\"${words[0]}\" __complete \"${words[@]:1}\" \"$cur\" 2>/dev/null) || return 0\n"
    "    directive=${out##*:}\n"
    "    COMPREPLY=()\n"
    "    while IFS= read -r cand; do\n"
    "        [[ -z $cand || $cand == :* ]] && continue\n"
    "        cand=${cand%%$'\\t'*}\n"
    "        # bash splits --flag=value at '=': the word under the cursor is the value\n"
    "        [[ $cur == --*=* && $COMP_WORDBREAKS == *=* ]] && cand=${cand#*=}\n"
    "        COMPREPLY+=(\"$cand\")\n"
    "    done <<<\"$out\"\n"
    "    (( directive & 2 )) && compopt -o nospace\n"
    "    if (( ${#COMPREPLY[@]} == 0 && (directive & 4) == 0 )); then\n"
    "        word=${COMP_WORDS[COMP_CWORD]}\n"
    "        [[ $word == = ]] && word=\"\"\n"
    "        compopt -o filenames\n"
    "        mapfile -t COMPREPLY < <(compgen -f -- \"$word\")\n"
    "    fi\n"
    "    return 0\n"
    "}\n"
    "complete -F __webhookctl_complete webhookctl\n";

static const char zsh_script[] =
    "#compdef webhookctl\n"
    "# zsh completion for webhookctl.  Load it with\n"
    "#     source <(webhookctl completion zsh)      (after compinit)\n"
    "# or save it as _webhookctl in a directory of $fpath.\n"
    "# Candidates come from `webhookctl __complete WORD... CURRENT`; its last line\n"
    "# is \":<directive>\" (2: no space after the candidate, 4: no file names).\n"
    "_webhookctl() {\n"
    "    local out directive l v d\n"
    "    local -a lines cands\n"
    "    out=$(\"${words[1]}\" __complete \"${(@)words[2,CURRENT-1]}\" \"${words[CURRENT]}\" 2>/dev/null) || return 1\n"
    "    lines=(\"${(@f)out}\")\n"
    "    directive=${lines[-1]#:}\n"
    "    for l in \"${(@)lines[1,-2]}\"; do\n"
    "        v=${l%%$'\\t'*}\n"
    "        d=\"\"\n"
    "        [[ $l == *$'\\t'* ]] && d=${l#*$'\\t'}\n"
    "        cands+=(\"${v//:/\\\\:}${d:+:$d}\")\n"
    "    done\n"
    "    if (( ${#cands} )); then\n"
    "        if (( directive & 2 )); then\n"
    "            _describe -t webhookctl webhookctl cands -S ''\n"
    "        else\n"
    "            _describe -t webhookctl webhookctl cands\n"
    "        fi\n"
    "    elif (( (directive & 4) == 0 )); then\n"
    "        _files\n"
    "    fi\n"
    "}\n"
    "if [[ ${funcstack[1]} == _webhookctl ]]; then\n"
    "    _webhookctl \"$@\"\n"
    "else\n"
    "    compdef _webhookctl webhookctl\n"
    "fi\n";

static const char fish_script[] = "# fish completion for webhookctl.  Load it with\n"
                                  "#     webhookctl completion fish | source\n"
                                  "# or save it as ~/.config/fish/completions/webhookctl.fish.\n"
                                  "# Candidates come from `webhookctl __complete WORD... CURRENT`; its last line\n"
                                  "# is \":<directive>\" (2: no space after the candidate, 4: no file names).\n"
                                  "function __webhookctl_complete\n"
                                  "    set -l words (commandline -opc)\n"
                                  "    set -l cur (commandline -ct)\n"
                                  "    set -l out ($words[1] __complete $words[2..] $cur 2>/dev/null)\n"
                                  "    or return\n"
                                  "    set -l directive (string replace -r '^:' '' -- $out[-1])\n"
                                  "    set -e out[-1]\n"
                                  "    if test (count $out) -gt 0\n"
                                  "        printf '%s\\n' $out\n"
                                  "    else if test (math \"bitand($directive, 4)\") -eq 0\n"
                                  "        __fish_complete_path $cur\n"
                                  "    end\n"
                                  "end\n"
                                  "complete -c webhookctl -f -a '(__webhookctl_complete)'\n";

/* Each shell's script, and its help text as cobra writes it. */
static const struct {
    const char *shell, *script;
} scripts[] = {{"bash", bash_script}, {"fish", fish_script}, {"zsh", zsh_script}};

static int print_script(const wh_ctl_args *a)
{
    if (a->nargs > 0)
        return wh_ctl_usage_error(a, "unknown argument \"%s\": %s takes none", a->args[0], a->cmd->name);
    for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++)
        if (strcmp(a->cmd->name, scripts[i].shell) == 0)
            fputs(scripts[i].script, stdout);
    return 0;
}

#define SHELL_CMD(shell, about, setup, load_now, load_always)                                                          \
    {                                                                                                                  \
        .name = shell, .summary = "Generate the autocompletion script for " shell,                                     \
        .long_help = "Generate the autocompletion script for the " shell " shell" about ".\n\n" setup                  \
                     "To load completions in your current shell session:\n\n\t" load_now                               \
                     "\n\nTo load completions for every new session, execute once:\n\n\t" load_always                  \
                     "\n\nYou will need to start a new shell for this setup to take effect.\n",                        \
        .run = print_script,                                                                                           \
    }

static const wh_ctl_cmd cmd_bash = SHELL_CMD("bash", " (bash 4.4 or newer)", "", "source <(webhookctl completion bash)",
                                             "webhookctl completion bash > /etc/bash_completion.d/webhookctl");
static const wh_ctl_cmd cmd_zsh =
    SHELL_CMD("zsh", "",
              "If shell completion is not already enabled in your environment you will need\n"
              "to enable it.  You can execute the following once:\n\n"
              "\techo \"autoload -U compinit; compinit\" >> ~/.zshrc\n\n",
              "source <(webhookctl completion zsh)", "webhookctl completion zsh > \"${fpath[1]}/_webhookctl\"");
static const wh_ctl_cmd cmd_fish = SHELL_CMD("fish", "", "", "webhookctl completion fish | source",
                                             "webhookctl completion fish > ~/.config/fish/completions/webhookctl.fish");

static const wh_ctl_cmd *const shells[] = {&cmd_bash, &cmd_fish, &cmd_zsh, NULL};

const wh_ctl_cmd wh_ctl_cmd_completion = {
    .name = "completion",
    .summary = "Generate the autocompletion script for the specified shell",
    .long_help = "Generate the autocompletion script for webhookctl for the specified shell.\n"
                 "See each sub-command's help for details on how to use the generated script.\n",
    .subcommands = shells,
};
