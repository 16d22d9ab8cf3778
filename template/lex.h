/*
 * lex.h - the lexer of Go's text/template (lex.c, after Go's parse/lex.go) as
 * the parser (parse.c, after parse/parse.go) reads it: items, their types, and
 * the lexer that turns a template's text into the whole list of items at once.
 */
#ifndef WH_TMPL_LEX_H
#define WH_TMPL_LEX_H

#include "tmpl_int.h"

typedef enum {
    I_ERROR,
    I_BOOL,
    I_CHAR,
    I_CHARCONST,
    I_COMMENT,
    I_COMPLEX,
    I_ASSIGN,
    I_DECLARE,
    I_EOF,
    I_FIELD,
    I_IDENT,
    I_LDELIM,
    I_LPAREN,
    I_NUMBER,
    I_PIPE,
    I_RAWSTRING,
    I_RDELIM,
    I_RPAREN,
    I_SPACE,
    I_STRING,
    I_TEXT,
    I_VARIABLE,
    I_KEYWORD, /* delimits keywords */
    I_BLOCK,
    I_BREAK,
    I_CONTINUE,
    I_DOT,
    I_DEFINE,
    I_ELSE,
    I_END,
    I_IF,
    I_NIL,
    I_RANGE,
    I_TEMPLATE,
    I_WITH
} itype;

typedef struct item {
    itype typ;
    int pos;
    const char *val;
    size_t len;
    int line;
} item;

typedef struct lexer {
    const char *in;
    size_t len;
    const char *ld, *rd;
    size_t ldl, rdl;
    size_t pos, start;
    int at_eof;
    int line, start_line;
    int paren_depth;
    int break_ok, continue_ok;
    item *items;
    size_t nitems, capitems;
    tm_arena *arena;
} lexer;

#define LEOF (-1)

/* Lex l->in[0..l->len) into l->items (ends with I_EOF or I_ERROR). */
void tm_lex_all(lexer *l);
/* Go's isSpace: space, tab, carriage return, newline. */
int tm_is_space(int r);

#endif
