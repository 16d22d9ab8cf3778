/*
 * node.c - Go's parse/node.go String methods: a parse tree printed back as
 * template text, which Go's execution errors quote (e.g. `at <.a.b>`); and
 * the one walk over every node that the load-time folds in exec.c share.
 */
#include <stdio.h>
#include <string.h>

#include "tmpl_int.h"
#include "wh_go.h"

/* An operand of a command or chain: a pipeline there was written in parentheses. */
static void operand_string(const tm_node *n, wh_buf *out)
{
    if (n->kind == N_PIPE) {
        wh_buf_putc(out, '(');
        tm_node_string(n, out);
        wh_buf_putc(out, ')');
    } else {
        tm_node_string(n, out);
    }
}

void tm_node_string(const tm_node *n, wh_buf *out)
{
    size_t i;

    switch (n->kind) {
    case N_LIST:
        for (i = 0; i < n->u.list.n; i++)
            tm_node_string(n->u.list.items[i], out);
        break;
    case N_TEXT:
        wh_buf_printf(out, "%.*s", (int)n->u.text.len, n->u.text.s);
        break;
    case N_ACTION:
        wh_buf_puts(out, "{{");
        tm_node_string(n->u.branch.pipe, out);
        wh_buf_puts(out, "}}");
        break;
    case N_IF:
    case N_RANGE:
    case N_WITH:
        wh_buf_puts(out, n->kind == N_IF ? "{{if " : n->kind == N_RANGE ? "{{range " : "{{with ");
        tm_node_string(n->u.branch.pipe, out);
        wh_buf_puts(out, "}}");
        tm_node_string(n->u.branch.list, out);
        if (n->u.branch.else_list) {
            wh_buf_puts(out, "{{else}}");
            tm_node_string(n->u.branch.else_list, out);
        }
        wh_buf_puts(out, "{{end}}");
        break;
    case N_TEMPLATE:
        wh_buf_puts(out, "{{template ");
        wh_go_quote(out, n->u.tmpl.name, strlen(n->u.tmpl.name), '\"', 0);
        if (n->u.tmpl.pipe) {
            wh_buf_putc(out, ' ');
            tm_node_string(n->u.tmpl.pipe, out);
        }
        wh_buf_puts(out, "}}");
        break;
    case N_BREAK:
        wh_buf_puts(out, "{{break}}");
        break;
    case N_CONTINUE:
        wh_buf_puts(out, "{{continue}}");
        break;
    case N_PIPE:
        for (i = 0; i < n->u.pipe.ndecl; i++) {
            if (i > 0)
                wh_buf_puts(out, ", ");
            tm_node_string(n->u.pipe.decl[i], out);
        }
        if (n->u.pipe.ndecl)
            wh_buf_puts(out, " := ");
        for (i = 0; i < n->u.pipe.ncmds; i++) {
            if (i > 0)
                wh_buf_puts(out, " | ");
            tm_node_string(n->u.pipe.cmds[i], out);
        }
        break;
    case N_COMMAND:
        for (i = 0; i < n->u.cmd.nargs; i++) {
            if (i > 0)
                wh_buf_putc(out, ' ');
            operand_string(n->u.cmd.args[i], out);
        }
        break;
    case N_FIELD:
        for (i = 0; i < n->u.field.n; i++) {
            wh_buf_putc(out, '.');
            wh_buf_puts(out, n->u.field.idents[i]);
        }
        break;
    case N_VARIABLE:
        for (i = 0; i < n->u.field.n; i++) {
            if (i > 0)
                wh_buf_putc(out, '.');
            wh_buf_puts(out, n->u.field.idents[i]);
        }
        break;
    case N_CHAIN:
        operand_string(n->u.chain.base, out);
        for (i = 0; i < n->u.chain.n; i++) {
            wh_buf_putc(out, '.');
            wh_buf_puts(out, n->u.chain.fields[i]);
        }
        break;
    case N_IDENT:
        wh_buf_puts(out, n->u.ident.name);
        break;
    case N_DOT:
        wh_buf_putc(out, '.');
        break;
    case N_NIL:
        wh_buf_puts(out, "nil");
        break;
    case N_BOOL:
        wh_buf_puts(out, n->u.boolean ? "true" : "false");
        break;
    case N_NUMBER:
        wh_buf_puts(out, n->u.num.text);
        break;
    case N_STRING:
        wh_buf_puts(out, n->u.str.quoted);
        break;
    case N_END:
        wh_buf_puts(out, "{{end}}");
        break;
    case N_ELSE:
        wh_buf_puts(out, "{{else}}");
        break;
    case N_COMMENT:
        break;
    }
}

void tm_node_walk(tm_node *n, void (*visit)(tm_node *n, void *arg), void *arg)
{
    size_t i;

    if (n == NULL)
        return;
    switch (n->kind) {
    case N_LIST:
        for (i = 0; i < n->u.list.n; i++)
            tm_node_walk(n->u.list.items[i], visit, arg);
        break;
    case N_ACTION:
    case N_IF:
    case N_RANGE:
    case N_WITH:
        tm_node_walk(n->u.branch.pipe, visit, arg);
        tm_node_walk(n->u.branch.list, visit, arg);
        tm_node_walk(n->u.branch.else_list, visit, arg);
        break;
    case N_TEMPLATE:
        tm_node_walk(n->u.tmpl.pipe, visit, arg);
        break;
    case N_PIPE:
        for (i = 0; i < n->u.pipe.ncmds; i++)
            tm_node_walk(n->u.pipe.cmds[i], visit, arg);
        break;
    case N_COMMAND:
        for (i = 0; i < n->u.cmd.nargs; i++)
            tm_node_walk(n->u.cmd.args[i], visit, arg);
        break;
    case N_CHAIN:
        tm_node_walk(n->u.chain.base, visit, arg);
        break;
    default:
        break;
    }
    visit(n, arg);
}
