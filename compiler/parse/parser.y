/*
 * parser.y -- the Dyad grammar (LANGUAGE.md sections 2-6, 9, 10, 12).
 *
 * Pure bison parser over the tokens of lexer.l.  Every action is one call of
 * a constructor from ast.c; there is no semantics here.  Locations are byte
 * Spans.  `error` productions at definition, declaration and relation
 * boundaries let one run report many mistakes.
 *
 * Ambiguities and how they are resolved:
 *   - Relations have no terminator.  An expression always extends as far as
 *     it can (`expr: oexpr %prec LOWEST`), so `x = a` then `-y = b` on the
 *     next line reads as `x = a - y`; the lexer turns `(`/`[` at the start
 *     of a line into LPAREN_NL/LBRACK_NL, which never call or index.
 *   - Relation-level `if c ... end` vs an equation starting with
 *     `if c then a else b`: decided by the token after the condition.
 *   - A string before a relation is its docstring (STRING has the lowest
 *     precedence), never the start of an equation.
 *   - `input`, `path`, `test`, `state`, ... are names wherever a name is
 *     expected; `not` is a keyword (same tree as `!`).
 *
 * Error recovery: `error` at file, body, struct, function and relation level.
 * After a syntax error in mid-line the lexer drops the rest of that line and
 * sends SYNC before the next line's first token; `X error SYNC` productions
 * then call yyerrok, so the next line's mistakes are reported too (one
 * message per broken line, not bison's three-token silence).  Block heads
 * with an error (`for i 1:3`, `if`, `switch`, `component`) still open their
 * block, so its body and `end` stay inside.  LAC keeps the expected-token
 * sets exact for the messages (yyreport_syntax_error).
 */
%define api.pure full
%define api.location.type {Span}
%define parse.error custom
%define lr.type ielr
%define parse.lac full
%locations
%expect 0
%parse-param {Parser *p} {void *scanner}
%lex-param {void *scanner}
%define api.prefix {yy}

%code requires {
#include "parse_internal.h"
}

%code provides {
#define YYMAXDEPTH 2500
}

%code {
#include <string.h>
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                          \
    do {                                                                     \
        if (N) {                                                             \
            int k_ = 1;                                                      \
            while (k_ < (int)(N) && YYRHSLOC(Rhs, k_).lo == YYRHSLOC(Rhs, k_).hi) \
                k_++;                                                        \
            (Cur).file = YYRHSLOC(Rhs, N).file;                              \
            (Cur).lo = YYRHSLOC(Rhs, k_).lo;                                 \
            (Cur).hi = YYRHSLOC(Rhs, N).hi;                                  \
            if ((Cur).lo > (Cur).hi) (Cur).lo = (Cur).hi;                    \
        } else {                                                             \
            (Cur).file = YYRHSLOC(Rhs, 0).file;                              \
            (Cur).lo = (Cur).hi = YYRHSLOC(Rhs, 0).hi;                       \
        }                                                                    \
    } while (0)

static void yyerror(Span *loc, Parser *p, void *scanner, const char *msg);
#define yyparse dyadc_yyparse_impl
}

%union {
    AstNode *node;
    NList list;
    Sym sym;
    AstQName qname;
    AstMeta meta;
    int ival;
    struct { AstNode *type; NList dims; } typed;
    struct { AstNode *v, *init; bool has; } val;
    struct { NList list; bool has; } mods;
}

%token <sym> IDENT "identifier"
%token NUMBER "number" STRING "string"
%token TK_META_OBJ "metadata `{...}`" TK_META_BRK "metadata `[{...}]`" TK_META_LINK "metadata link `{^...}`"
%token END_IDX "`end` (in an index)" LPAREN_NL "`(`" LBRACK_NL "`[`"
%token SYNC "start of the next line" /* after an error: the skipped line ended */
%token ANALYSIS "`analysis`" ANALYSIS_POINT "`analysis_point`" AND "`and`"
%token ASSERT "`assert`" CASE "`case`" COMPONENT "`component`" CONNECT "`connect`"
%token CONNECTOR "`connector`" CONSTANT "`constant`" CONTINUITY "`continuity`"
%token DEFAULT "`default`" ELSE "`else`" ELSEIF "`elseif`" END "`end`" ENUM "`enum`"
%token EXAMPLE "`example`" EXTENDS "`extends`" EXTERNAL "`external`" FALSE "`false`"
%token FINAL "`final`" FLOW "`flow`" FOR "`for`" FUNC "`func`" FUNCTION "`function`"
%token GUESS "`guess`" IF "`if`" IN "`in`" KW_INITIAL "`initial`" INPUT "`input`"
%token METADATA "`metadata`" MISSING "`missing`" OR "`or`" OUTPUT "`output`"
%token PARAMETER "`parameter`" PARTIAL "`partial`" PATH "`path`" POTENTIAL "`potential`"
%token RELATIONS "`relations`" STREAM "`stream`" STRUCT "`struct`" NOT "`not`" STATE "`state`"
%token STRUCTURAL "`structural`" SWITCH "`switch`" TEST "`test`" THEN "`then`"
%token TRANSITION "`transition`" TRUE "`true`" TYPE "`type`" USING "`using`"
%token VARIABLE "`variable`"
%token COLONCOLON "`::`" LE "`<=`" GE "`>=`" EQEQ "`==`" NE "`!=`" ARROW "`=>`"
%token EADD "`.+`" ESUB "`.-`" EMUL "`.*`" EDIV "`./`" EMOD "`.%`" EPOW "`.^`"

%precedence LOWEST
%precedence KW_INITIAL  /* `= v initial w` wins over a legacy `initial state` block */
%precedence ':'
%left OR
%left AND
%precedence '!' NOT
%nonassoc '<' LE '>' GE EQEQ NE
%left '+' '-' EADD ESUB
%precedence UMINUS
%left '*' '/' '%' EMUL EDIV EMOD
%right '^' EPOW
%precedence '(' '['

%type <node> def component connector struct_def enum_def typedef using_def function_def
%type <node> comp_head conn_head struct_head func_head body_item decl_item decl inst extends
%type <node> field field0 ecase ecase1 usym fstmt inst_value type_ref functype cparam
%type <node> rel_item relation rel_body eq for_rel if_rel switch_rel case_item case_head
%type <node> if_head for_head switch_head else_opt cond_opt state_block state_head
%type <node> mod expr oexpr eq_lhs ifexpr elif_chain postfix atom sub arg iter dim
%type <list> body rel_list sfields case_list cases elifs clock_params_opt cparam_list
%type <list> expr_list subs args_opt arg_list iter_list dim_list field_list
%type <list> fparams_opt fparams ptypes kwlist fresult using_syms fbody mod_list
%type <list> clock_args_opt
%type <sym> name modname
%type <qname> qname using_lib
%type <meta> meta_opt meta_tok meta_section meta_tail
%type <ival> comp_prefix var_kind decl_flags final_opt conn_dir alias_eq
%type <typed> typed
%type <val> value_opt dvalue
%type <mods> mods_opt mods

%start file

%%

file
    : %empty
    | file def                      { top_add(p, $2); }
    | file STRING def               { top_add(p, with_doc(p, $3, @2)); }
    | file ';'
    | file error
    | file error SYNC               { yyerrok; }
    ;

def : component | connector | struct_def | enum_def | typedef | using_def | function_def ;

/* ---- components and analyses (2.2, 2.7) ---- */

comp_prefix
    : %empty                        { $$ = DEF_PLAIN; }
    | PARTIAL                       { $$ = DEF_PARTIAL; }
    | EXAMPLE                       { $$ = DEF_EXAMPLE; }
    | TEST                          { $$ = DEF_TEST; }
    | EXTERNAL                      { $$ = DEF_EXTERNAL; }
    ;

comp_head
    : comp_prefix COMPONENT name clock_params_opt
                                    { $$ = def_open(p, AST_COMPONENT, $1, $3, $4, @2); }
    | comp_prefix ANALYSIS name     { $$ = def_open(p, AST_ANALYSIS, $1, $3, nl_empty(), @2); }
    | comp_prefix COMPONENT error   { $$ = def_open(p, AST_COMPONENT, $1, NULL, nl_empty(), @2); }
    | comp_prefix ANALYSIS error    { $$ = def_open(p, AST_ANALYSIS, $1, NULL, nl_empty(), @2); }
    ;

component
    : comp_head body meta_section END
                                    { $$ = def_close(p, $1, $2, nl_empty(), false, $3, @$); }
    | comp_head body RELATIONS rel_list meta_section END
                                    { $$ = def_close(p, $1, $2, $4, true, $5, @$); }
    ;

clock_params_opt
    : %empty                        { $$ = nl_empty(); }
    | '@' '[' cparam_list ']'       { $$ = $3; }
    ;

cparam_list
    : cparam                        { $$ = nl_one(p, $1); }
    | cparam_list ',' cparam        { $$ = nl_push(p, $1, $3); }
    ;

cparam
    : INPUT name                    { $$ = mk_clockparam(p, false, $2, NULL, @$); }
    | OUTPUT name                   { $$ = mk_clockparam(p, true, $2, NULL, @$); }
    | INPUT name EXTENDS name       { $$ = mk_clockparam(p, false, $2, $4, @$); }
    | OUTPUT name EXTENDS name      { $$ = mk_clockparam(p, true, $2, $4, @$); }
    ;

body
    : %empty                        { $$ = nl_empty(); }
    | body body_item                { $$ = nl_push(p, $1, $2); }
    | body ';'                      { $$ = $1; }
    | body error                    { $$ = $1; }
    | body error SYNC               { $$ = $1; yyerrok; }
    ;

body_item
    : decl_item                     { $$ = item_add(p, $1); }
    | STRING decl_item              { $$ = item_add(p, with_doc(p, $2, @1)); }
    | state_block                   { $$ = $1; }
    ;

/* ---- state machines (4.12, legacy): parsed, then rejected ---- */

state_block
    : state_head body state_rels END
                                    { $$ = state_close(p, $1, @$); }
    ;

state_head
    : STATE name                    { $$ = state_open(p, false, $2, @$); }
    | KW_INITIAL STATE name         { $$ = state_open(p, true, $3, @$); }
    ;

state_rels
    : %empty
    | RELATIONS rel_list
    ;

decl_item : decl | inst | extends ;

extends
    : EXTENDS type_ref meta_opt     { $$ = with_meta(p, mk_extends(p, $2, @$), $3); }
    ;

meta_section
    : %empty                        { $$ = meta_none(); }
    | METADATA meta_tok             { $$ = $2; }
    | METADATA meta_tok ';'         { $$ = $2; }
    ;

meta_tail
    : %empty                        { $$ = meta_none(); }
    | meta_tok                      { $$ = $1; }
    | METADATA meta_tok             { $$ = $2; }
    ;

meta_opt
    : %empty                        { $$ = meta_none(); }
    | meta_tok                      { $$ = $1; }
    ;

meta_tok
    : TK_META_OBJ                      { $$ = mk_meta(p, META_OBJECT, @1); }
    | TK_META_BRK                      { $$ = mk_meta(p, META_BRACKETED, @1); }
    | TK_META_LINK                     { $$ = mk_meta(p, META_LINK, @1); }
    ;

/* ---- declarations (3.1) ---- */

decl
    : var_kind name COLONCOLON typed value_opt cond_opt meta_opt
                                    { $$ = with_meta(p, mk_decl(p, $1 >> 8, $1 & 0xff, $2, $4.type, $4.dims, $5.v, $5.init, $5.has, $6, @$), $7); }
    | decl_flags var_kind name COLONCOLON typed value_opt cond_opt meta_opt
                                    { $$ = with_meta(p, mk_decl(p, $1 | ($2 >> 8), $2 & 0xff, $3, $5.type, $5.dims, $6.v, $6.init, $6.has, $7, @$), $8); }
    ;

decl_flags
    : FINAL                         { $$ = DF_FINAL; }
    | STRUCTURAL                    { $$ = DF_STRUCTURAL; }
    | decl_flags FINAL              { $$ = $1 | DF_FINAL; }
    | decl_flags STRUCTURAL         { $$ = $1 | DF_STRUCTURAL; }
    ;

var_kind
    : PARAMETER                     { $$ = VAR_PARAMETER; }
    | VARIABLE                      { $$ = VAR_VARIABLE; }
    | CONSTANT                      { $$ = VAR_CONSTANT; }
    | PATH                          { $$ = VAR_PATH; }
    | POTENTIAL                     { $$ = VAR_POTENTIAL; }
    | FLOW                          { $$ = VAR_FLOW; }
    | STREAM                        { $$ = VAR_STREAM; }
    | INPUT                         { $$ = VAR_INPUT; }
    | OUTPUT                        { $$ = VAR_OUTPUT; }
    ;

typed
    : type_ref %prec LOWEST         { $$.type = $1; $$.dims = nl_empty(); }
    | type_ref '[' dim_list ']'     { $$.type = $1; $$.dims = $3; }
    | functype                      { $$.type = $1; $$.dims = nl_empty(); }
    ;

dim_list
    : dim                           { $$ = nl_one(p, $1); }
    | dim_list ',' dim              { $$ = nl_push(p, $1, $3); }
    ;

dim
    : expr                          { $$ = $1; }
    | ':'                           { $$ = mk_leaf(p, AST_COLON, @1); }
    ;

value_opt
    : %empty                        { $$.v = NULL; $$.init = NULL; $$.has = false; }
    | '=' dvalue                    { $$ = $2; }
    ;

dvalue
    : expr %prec LOWEST             { $$.v = $1; $$.init = NULL; $$.has = false; }
    | expr KW_INITIAL expr             { $$.v = $1; $$.init = $3; $$.has = true; }
    | KW_INITIAL expr                  { $$.v = NULL; $$.init = $2; $$.has = true; }
    ;

cond_opt
    : %empty                        { $$ = NULL; }
    | IF expr                       { $$ = $2; }
    ;

/* ---- instances (3.3) ---- */

inst
    : name '=' inst_value cond_opt meta_opt
                                    { $$ = with_meta(p, mk_inst(p, $1, NULL, nl_empty(), $3, $4, @$), $5); }
    | name COLONCOLON typed '=' inst_value cond_opt meta_opt
                                    { $$ = with_meta(p, mk_inst(p, $1, $3.type, $3.dims, $5, $6, @$), $7); }
    ;

inst_value
    : type_ref                      { $$ = $1; }
    | lbrack_any type_ref FOR iter_list ']'
                                    { $$ = mk_compr(p, $2, $4, @$); }
    ;

type_ref
    : qname clock_args_opt mods_opt { $$ = mk_type(p, $1, $2, $3.list, $3.has, @$); }
    ;

clock_args_opt
    : %empty                        { $$ = nl_empty(); }
    | '@' '[' expr_list ']'         { $$ = $3; }
    ;

qname
    : name                          { $$ = mk_qname(p, $1, @1); }
    | qname '.' name                { $$ = qname_push(p, $1, $3, @$); }
    ;

name
    : IDENT                         { $$ = $1; }
    | INPUT                         { $$ = sym_of(p, @1); }
    | PATH                          { $$ = sym_of(p, @1); }
    | TEST                          { $$ = sym_of(p, @1); }
    | EXAMPLE                       { $$ = sym_of(p, @1); }
    | EXTERNAL                      { $$ = sym_of(p, @1); }
    | PARTIAL                       { $$ = sym_of(p, @1); }
    | STATE                         { $$ = sym_of(p, @1); }
    ;

/* ---- modifications (3.4) ---- */

mods_opt
    : %empty %prec LOWEST           { $$.list = nl_empty(); $$.has = false; }
    | mods                          { $$ = $1; }
    ;

mods
    : '(' ')'                       { $$.list = nl_empty(); $$.has = true; }
    | '(' mod_list ')'              { $$.list = $2; $$.has = true; }
    | '(' mod_list ',' ')'          { $$.list = $2; $$.has = true; }
    ;

mod_list
    : mod                           { $$ = nl_one(p, $1); }
    | mod_list ',' mod              { $$ = nl_push(p, $1, $3); }
    ;

mod
    : final_opt modname '=' dvalue  { $$ = mk_mod(p, $1, $2, nl_empty(), false, $4.v, $4.init, $4.has, @$); }
    | final_opt modname mods        { $$ = mk_mod(p, $1, $2, $3.list, true, NULL, NULL, false, @$); }
    | final_opt modname mods '=' dvalue
                                    { $$ = mk_mod(p, $1, $2, $3.list, true, $5.v, $5.init, $5.has, @$); }
    ;

modname
    : name                          { $$ = $1; }
    | KW_INITIAL                       { $$ = sym_of(p, @1); }
    | GUESS                         { $$ = sym_of(p, @1); }
    ;

final_opt
    : %empty                        { $$ = 0; }
    | FINAL                         { $$ = 1; }
    ;

/* ---- connectors (2.3) ---- */

conn_head
    : CONNECTOR name clock_params_opt
                                    { $$ = def_open(p, AST_CONNECTOR, DEF_PLAIN, $2, $3, @1); }
    ;

connector
    : conn_head body meta_section END
                                    { $$ = def_close(p, $1, $2, nl_empty(), false, $3, @$); }
    | conn_head alias_eq conn_dir type_ref meta_tail
                                    { $$ = def_alias(p, $1, $3, $4, $5, @$); }
    ;

alias_eq
    : '='                           { $$ = block_pop(p); }
    ;

conn_dir
    : INPUT                         { $$ = 0; }
    | OUTPUT                        { $$ = 1; }
    ;

/* ---- struct, enum, type, using (2.1, 2.4-2.6) ---- */

struct_head
    : STRUCT name                   { $$ = def_open(p, AST_STRUCT, DEF_PLAIN, $2, nl_empty(), @1); }
    ;

struct_def
    : struct_head sfields meta_section END
                                    { $$ = def_close(p, $1, $2, nl_empty(), false, $3, @$); }
    ;

sfields
    : %empty                        { $$ = nl_empty(); }
    | sfields field                 { $$ = nl_push(p, $1, item_add(p, $2)); }
    | sfields STRING field          { $$ = nl_push(p, $1, item_add(p, with_doc(p, $3, @2))); }
    | sfields ';'                   { $$ = $1; }
    | sfields error                 { $$ = $1; }
    | sfields error SYNC            { $$ = $1; yyerrok; }
    ;

field
    : field0 meta_opt               { $$ = with_meta(p, $1, $2); }
    ;

field0
    : name COLONCOLON typed value_opt
                                    { $$ = mk_decl(p, 0, VAR_FIELD, $1, $3.type, $3.dims, $4.v, $4.init, $4.has, NULL, @$); }
    ;

field_list
    : field0                        { $$ = nl_one(p, $1); }
    | field_list ',' field0         { $$ = nl_push(p, $1, $3); }
    ;

enum_def
    : ENUM name '=' case_list       { $$ = mk_enum(p, $2, $4, @$); }
    | ENUM name '=' '|' case_list   { $$ = mk_enum(p, $2, $5, @$); }
    ;

case_list
    : ecase                         { $$ = nl_one(p, item_add(p, $1)); }
    | case_list '|' ecase           { $$ = nl_push(p, $1, item_add(p, $3)); }
    ;

ecase
    : ecase1                        { $$ = $1; }
    | STRING ecase1                 { $$ = with_doc(p, $2, @1); }
    ;

ecase1
    : name                          { $$ = mk_enumcase(p, $1, nl_empty(), false, @$); }
    | name '(' ')'                  { $$ = mk_enumcase(p, $1, nl_empty(), true, @$); }
    | name '(' field_list ')'       { $$ = mk_enumcase(p, $1, $3, true, @$); }
    ;

typedef
    : TYPE name '=' typed meta_tail
                                    { $$ = mk_typedef(p, $2, $4.type, $4.dims, $5, @$); }
    ;

functype
    : FUNC '(' fparams_opt ')' COLONCOLON fresult
                                    { $$ = mk_functype(p, $3, $6, @$); }
    ;

fparams_opt
    : %empty                        { $$ = nl_empty(); }
    | ptypes                        { $$ = $1; }
    | ptypes ';' kwlist             { $$ = nl_cat(p, $1, $3); }
    | ';' kwlist                    { $$ = $2; }
    ;

ptypes
    : COLONCOLON type_ref           { $$ = nl_one(p, $2); }
    | ptypes ',' COLONCOLON type_ref
                                    { $$ = nl_push(p, $1, $4); }
    ;

kwlist
    : field0                        { $$ = nl_one(p, $1); }
    | kwlist ',' field0             { $$ = nl_push(p, $1, $3); }
    ;

fresult
    : type_ref                      { $$ = nl_one(p, $1); }
    | lparen_any ptypes ')'         { $$ = $2; }
    ;

using_def
    : USING using_lib               { $$ = mk_using(p, $2, nl_empty(), @$); }
    | USING using_lib ':' using_syms
                                    { $$ = mk_using(p, $2, $4, @$); }
    ;

using_lib
    : qname                         { $$ = $1; }
    | '.'                           { $$ = mk_qname(p, NULL, @1); }
    ;

using_syms
    : usym                          { $$ = nl_one(p, $1); }
    | using_syms ',' usym           { $$ = nl_push(p, $1, $3); }
    ;

usym
    : name                          { $$ = mk_decl(p, 0, VAR_FIELD, $1, NULL, nl_empty(), NULL, NULL, false, NULL, @$); }
    | name COLONCOLON typed         { $$ = mk_decl(p, 0, VAR_FIELD, $1, $3.type, $3.dims, NULL, NULL, false, NULL, @$); }
    ;

/* ---- functions (our extension) ---- */

func_head
    : FUNCTION name                 { $$ = def_open(p, AST_FUNCTION, DEF_PLAIN, $2, nl_empty(), @1); }
    ;

function_def
    : func_head lparen_any fparams ')' COLONCOLON typed fbody END
                                    { $$ = mk_function(p, $1, $3, $6.type, $6.dims, $7, @$); }
    ;

fparams
    : %empty                        { $$ = nl_empty(); }
    | field_list                    { $$ = $1; }
    ;

fbody
    : %empty                        { $$ = nl_empty(); }
    | fbody fstmt                   { $$ = nl_push(p, $1, item_add(p, $2)); }
    | fbody ';'                     { $$ = $1; }
    | fbody error                   { $$ = $1; }
    | fbody error SYNC              { $$ = $1; yyerrok; }
    ;

fstmt
    : name '=' expr                 { $$ = mk_fstmt(p, $1, $3, @$); }
    | expr                          { $$ = mk_fstmt(p, NULL, $1, @$); }
    ;

/* ---- relations (4) ---- */

rel_list
    : %empty %prec LOWEST           { $$ = nl_empty(); }
    | rel_list rel_item             { $$ = nl_push(p, $1, $2); }
    | rel_list ';'                  { $$ = $1; }
    | rel_list error                { $$ = $1; }
    | rel_list error SYNC           { $$ = $1; yyerrok; }
    ;

rel_item
    : relation                      { $$ = item_add(p, $1); }
    | STRING relation               { $$ = item_add(p, with_doc(p, $2, @1)); }
    ;

relation
    : rel_body meta_opt             { $$ = with_meta(p, $1, $2); }
    | name ':' rel_body meta_opt    { $$ = with_meta(p, mk_label(p, $1, $3, @$), $4); }
    ;

rel_body
    : eq                            { $$ = $1; }
    | CONNECT lparen_any expr_list ')'
                                    { $$ = mk_connect(p, AST_CONNECT, $3, @$); }
    | CONTINUITY lparen_any expr_list ')'
                                    { $$ = mk_connect(p, AST_CONTINUITY, $3, @$); }
    | ANALYSIS_POINT lparen_any expr_list ')'
                                    { $$ = mk_connect(p, AST_ANALYSIS_POINT, $3, @$); }
    | ASSERT lparen_any expr_list ')'
                                    { $$ = mk_assert(p, $3, @$); }
    | TRANSITION lparen_any name ARROW name ',' expr ')'
                                    { $$ = mk_transition(p, $3, $5, $7, @$); }
    | for_rel                       { $$ = $1; }
    | if_rel                        { $$ = $1; }
    | switch_rel                    { $$ = $1; }
    ;

eq
    : eq_lhs '=' expr               { $$ = mk_eq(p, EQ_NORMAL, $1, $3, @$); }
    | KW_INITIAL eq_lhs '=' expr       { $$ = mk_eq(p, EQ_INITIAL, $2, $4, @$); }
    | GUESS eq_lhs '=' expr         { $$ = mk_eq(p, EQ_GUESS, $2, $4, @$); }
    ;

eq_lhs
    : oexpr %prec LOWEST            { $$ = $1; }
    | ifexpr                        { $$ = $1; }
    ;

for_head
    : FOR                           { $$ = block_open(p, AST_FOR, "`for`", NULL, @1); }
    ;

for_rel
    : for_head iter_list rel_list END
                                    { $$ = mk_for(p, $1, $2, $3, @$); }
    | for_head error rel_list END   { $$ = mk_for(p, $1, nl_empty(), $3, @$); }
    ;

if_head
    : IF expr %prec LOWEST          { $$ = block_open(p, AST_IF, "`if`", $2, @1); }
    | IF error                      { $$ = block_open(p, AST_IF, "`if`", NULL, @1); }
    ;

if_rel
    : if_head rel_list elifs else_opt END
                                    { $$ = mk_if(p, $1, $2, $3, $4, @$); }
    ;

elifs
    : %empty                        { $$ = nl_empty(); }
    | elifs ELSEIF expr rel_list    { $$ = nl_push(p, $1, mk_branch(p, $3, NULL, $4, span_join(@2, @4))); }
    ;

else_opt
    : %empty                        { $$ = NULL; }
    | ELSE rel_list                 { $$ = mk_branch(p, NULL, NULL, $2, @$); }
    ;

switch_head
    : SWITCH expr                   { $$ = block_open(p, AST_SWITCH, "`switch`", $2, @1); }
    | SWITCH error                  { $$ = block_open(p, AST_SWITCH, "`switch`", NULL, @1); }
    ;

switch_rel
    : switch_head cases END         { $$ = mk_switch(p, $1, $2, @$); }
    ;

cases
    : %empty                        { $$ = nl_empty(); }
    | cases case_item               { $$ = nl_push(p, $1, item_add(p, $2)); }
    | cases STRING case_item        { $$ = nl_push(p, $1, item_add(p, with_doc(p, $3, @2))); }
    | cases ';'                     { $$ = $1; }
    ;

case_item
    : case_head rel_list END        { $$ = mk_case(p, $1, $2, @$); }
    ;

case_head
    : CASE name                     { $$ = block_open(p, AST_BRANCH, "`case`", mk_ident(p, $2, @2), @1); }
    | DEFAULT                       { $$ = block_open(p, AST_BRANCH, "`default`", NULL, @1); }
    ;

iter_list
    : iter                          { $$ = nl_one(p, $1); }
    | iter_list ',' iter            { $$ = nl_push(p, $1, $3); }
    | iter_list ',' FOR iter        { $$ = nl_push(p, $1, $4); }
    ;

iter
    : name IN expr                  { $$ = mk_iter(p, $1, $3, @$); }
    ;

/* ---- expressions (6) ---- */

expr
    : oexpr %prec LOWEST            { $$ = $1; }
    | oexpr ':' oexpr               { $$ = mk_range(p, $1, NULL, $3, @$); }
    | oexpr ':' oexpr ':' oexpr     { $$ = mk_range(p, $1, $3, $5, @$); }
    | oexpr '?' oexpr ':' expr      { $$ = mk_ifexpr(p, $1, $3, $5, true, @$); }
    | ifexpr                        { $$ = $1; }
    ;

ifexpr
    : IF expr THEN expr elif_chain ELSE expr
                                    { $$ = mk_ifexpr_chain(p, $2, $4, $5, $7, @$); }
    ;

elif_chain
    : %empty                        { $$ = NULL; }
    | elif_chain ELSEIF expr THEN expr
                                    { $$ = mk_elif(p, $1, $3, $5, span_join(@2, @5)); }
    ;

oexpr
    : oexpr OR oexpr                { $$ = mk_binary(p, OP_OR, $1, $3, @$); }
    | oexpr AND oexpr               { $$ = mk_binary(p, OP_AND, $1, $3, @$); }
    | '!' oexpr                     { $$ = mk_unary(p, OP_NOT, $2, @$); }
    | NOT oexpr                     { $$ = mk_unary(p, OP_NOT, $2, @$); }
    | oexpr '<' oexpr               { $$ = mk_binary(p, OP_LT, $1, $3, @$); }
    | oexpr LE oexpr                { $$ = mk_binary(p, OP_LE, $1, $3, @$); }
    | oexpr '>' oexpr               { $$ = mk_binary(p, OP_GT, $1, $3, @$); }
    | oexpr GE oexpr                { $$ = mk_binary(p, OP_GE, $1, $3, @$); }
    | oexpr EQEQ oexpr              { $$ = mk_binary(p, OP_EQ, $1, $3, @$); }
    | oexpr NE oexpr                { $$ = mk_binary(p, OP_NE, $1, $3, @$); }
    | oexpr '+' oexpr               { $$ = mk_binary(p, OP_ADD, $1, $3, @$); }
    | oexpr '-' oexpr               { $$ = mk_binary(p, OP_SUB, $1, $3, @$); }
    | oexpr EADD oexpr              { $$ = mk_binary(p, OP_EADD, $1, $3, @$); }
    | oexpr ESUB oexpr              { $$ = mk_binary(p, OP_ESUB, $1, $3, @$); }
    | '-' oexpr %prec UMINUS        { $$ = mk_unary(p, OP_NEG, $2, @$); }
    | '+' oexpr %prec UMINUS        { $$ = mk_unary(p, OP_PLUS, $2, @$); }
    | oexpr '*' oexpr               { $$ = mk_binary(p, OP_MUL, $1, $3, @$); }
    | oexpr '/' oexpr               { $$ = mk_binary(p, OP_DIV, $1, $3, @$); }
    | oexpr '%' oexpr               { $$ = mk_binary(p, OP_MOD, $1, $3, @$); }
    | oexpr EMUL oexpr              { $$ = mk_binary(p, OP_EMUL, $1, $3, @$); }
    | oexpr EDIV oexpr              { $$ = mk_binary(p, OP_EDIV, $1, $3, @$); }
    | oexpr EMOD oexpr              { $$ = mk_binary(p, OP_EMOD, $1, $3, @$); }
    | oexpr '^' oexpr               { $$ = mk_binary(p, OP_POW, $1, $3, @$); }
    | oexpr EPOW oexpr              { $$ = mk_binary(p, OP_EPOW, $1, $3, @$); }
    | postfix %prec LOWEST          { $$ = $1; }
    ;

postfix
    : atom                          { $$ = $1; }
    | postfix '.' name              { $$ = mk_field(p, $1, $3, @$); }
    | postfix '[' subs ']'          { $$ = mk_index(p, $1, $3, @$); }
    | postfix '(' args_opt ')'      { $$ = mk_call(p, $1, $3, @$); }
    | postfix '@' name              { $$ = mk_at(p, $1, mk_ident(p, $3, @3), @$); }
    | postfix '@' lparen_any expr ')'
                                    { $$ = mk_at(p, $1, $4, @$); }
    ;

atom
    : name                          { $$ = mk_ident(p, $1, @1); }
    | NUMBER                        { $$ = mk_num(p, @1); }
    | STRING %prec LOWEST           { $$ = mk_str(p, @1); }
    | TRUE                          { $$ = mk_bool(p, @1, true); }
    | FALSE                         { $$ = mk_bool(p, @1, false); }
    | MISSING                       { $$ = mk_leaf(p, AST_MISSING, @1); }
    | END_IDX                       { $$ = mk_leaf(p, AST_END, @1); }
    | lparen_any expr ')'           { $$ = $2; }
    | lbrack_any ']'                { $$ = mk_array(p, nl_empty(), @$); }
    | lbrack_any expr_list ']'      { $$ = mk_array(p, $2, @$); }
    | lbrack_any expr_list ',' ']'  { $$ = mk_array(p, $2, @$); }
    | lbrack_any expr FOR iter_list ']'
                                    { $$ = mk_compr(p, $2, $4, @$); }
    ;

lparen_any : '(' | LPAREN_NL ;
lbrack_any : '[' | LBRACK_NL ;

expr_list
    : expr                          { $$ = nl_one(p, $1); }
    | expr_list ',' expr            { $$ = nl_push(p, $1, $3); }
    ;

subs
    : sub                           { $$ = nl_one(p, $1); }
    | subs ',' sub                  { $$ = nl_push(p, $1, $3); }
    ;

sub
    : expr                          { $$ = $1; }
    | ':'                           { $$ = mk_leaf(p, AST_COLON, @1); }
    ;

args_opt
    : %empty                        { $$ = nl_empty(); }
    | arg_list                      { $$ = $1; }
    | arg_list ','                  { $$ = $1; }
    ;

arg_list
    : arg                           { $$ = nl_one(p, $1); }
    | arg_list ',' arg              { $$ = nl_push(p, $1, $3); }
    ;

arg
    : expr                          { $$ = mk_arg(p, NULL, $1, @$); }
    | name '=' expr                 { $$ = mk_arg(p, $1, $3, @$); }
    ;

%%

#undef yyparse
int dyadc_yyparse(Parser *p, void *scanner) { return dyadc_yyparse_impl(p, scanner); }

static void yyerror(Span *loc, Parser *p, void *scanner, const char *msg) {
    (void)scanner;
    if (strstr(msg, "exhausted"))
        parse_syntax_error(p, *loc, "nesting too deep: the file nests expressions or blocks "
                                    "more deeply than the parser supports");
    else
        parse_syntax_error(p, *loc, msg);
}

static const char *tok_display(yysymbol_kind_t s, char *buf, size_t n) {
    const char *name = yysymbol_name(s);
    size_t len = strlen(name);
    if (len >= 2 && name[0] == '"' && name[len - 1] == '"') {
        snprintf(buf, n, "%.*s", (int)(len - 2), name + 1);
    } else if (len == 3 && name[0] == '\'') {
        snprintf(buf, n, "`%c`", name[1]);
    } else if (s == YYSYMBOL_YYEOF) {
        snprintf(buf, n, "end of file");
    } else {
        snprintf(buf, n, "%s", name);
    }
    return buf;
}

/* The symbol of a one-character token such as `=` (bison numbers them). */
static bool is_char(yysymbol_kind_t s, char c) {
    const char *name = yysymbol_name(s);
    return name[0] == '\'' && name[1] == c && name[2] == '\'' && !name[3];
}

static bool expects_char(const yysymbol_kind_t *exp, int n, char c) {
    for (int i = 0; i < n; i++)
        if (is_char(exp[i], c)) return true;
    return false;
}

static bool expects(const yysymbol_kind_t *exp, int n, yysymbol_kind_t s) {
    for (int i = 0; i < n; i++)
        if (exp[i] == s) return true;
    return false;
}

/* What the parser wanted, in a modeler's words, when the expected-token set
 * is too large to list; NULL when no summary fits. */
static const char *expected_words(const yysymbol_kind_t *exp, int n) {
    if (expects(exp, n, YYSYMBOL_COMPONENT) && expects(exp, n, YYSYMBOL_CONNECTOR))
        return "a definition (`component`, `connector`, `type`, ...)";
    if (expects(exp, n, YYSYMBOL_PARAMETER))
        return "a declaration, `relations` or `end`";
    if (expects(exp, n, YYSYMBOL_CONNECT))
        return expects(exp, n, YYSYMBOL_END) ? "a relation or `end`" : "a relation";
    if (expects(exp, n, YYSYMBOL_NUMBER))
        return "an expression";
    if (expects(exp, n, YYSYMBOL_IDENT))
        return "a name";
    return NULL;
}

/* The offending token: keywords and punctuation by spelling, names and
 * numbers with their text. */
static void bad_token(Parser *p, yysymbol_kind_t bad, Span at, char *buf, size_t n) {
    uint32_t len = at.hi - at.lo;
    const char *t = p->src->text + at.lo;
    if (bad == YYSYMBOL_YYEOF)
        snprintf(buf, n, "end of file");
    else if (bad == YYSYMBOL_IDENT && len <= 40)
        snprintf(buf, n, "name `%.*s`", (int)len, t);
    else if (bad == YYSYMBOL_NUMBER && len <= 40)
        snprintf(buf, n, "number `%.*s`", (int)len, t);
    else
        tok_display(bad, buf, n);
}

/* Tokens that continue an expression (binary operators, postfix forms). */
static bool is_operator(yysymbol_kind_t s) {
    const char *name = yysymbol_name(s);
    if (name[0] == '\'' && name[2] == '\'') return strchr("+-*/%^<>.([@?:", name[1]) != NULL;
    return s == YYSYMBOL_LE || s == YYSYMBOL_GE || s == YYSYMBOL_EQEQ || s == YYSYMBOL_NE ||
           s == YYSYMBOL_AND || s == YYSYMBOL_OR || s == YYSYMBOL_EADD || s == YYSYMBOL_ESUB ||
           s == YYSYMBOL_EMUL || s == YYSYMBOL_EDIV || s == YYSYMBOL_EMOD || s == YYSYMBOL_EPOW;
}

/* "an operator, `,` or `)`": an expression could continue, or these close it. */
static bool operator_or(const yysymbol_kind_t *exp, int n, char *out, size_t cap) {
    if (!expects_char(exp, n, '+')) return false;
    yysymbol_kind_t rest[8];
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (is_operator(exp[i])) continue;
        if (k == 3) return false;
        rest[k++] = exp[i];
    }
    int w = snprintf(out, cap, "an operator");
    char b[64];
    for (int i = 0; i < k && w < (int)cap - 64; i++)
        w += snprintf(out + w, cap - (size_t)w, "%s%s", i == k - 1 ? " or " : ", ",
                      tok_display(rest[i], b, sizeof b));
    return true;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, Parser *p, void *scanner) {
    (void)scanner;
    if (p->last_synthetic) return 0; /* "expected `end` ..." already said */
    p->skip_line = !p->tok_first;    /* recover at the next line (lexer.l) */
    yysymbol_kind_t exp[YYNTOKENS];
    int nexp = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
    yysymbol_kind_t bad = yypcontext_token(ctx);
    const Span *at = yypcontext_location(ctx);
    char what[160], msg[512], b[160];
    bad_token(p, bad, *at, what, sizeof what);
    int n = snprintf(msg, sizeof msg, "unexpected %s", what);
    if (nexp > 0 && nexp <= 4) {
        n += snprintf(msg + n, sizeof msg - (size_t)n, "; expected ");
        for (int i = 0; i < nexp && n < (int)sizeof msg - 80; i++)
            n += snprintf(msg + n, sizeof msg - (size_t)n, "%s%s",
                          i == 0 ? "" : i == nexp - 1 ? " or " : ", ",
                          tok_display(exp[i], b, sizeof b));
    } else if (is_char(bad, '=') && expects(exp, nexp, YYSYMBOL_CONNECT)) {
        snprintf(msg + n, sizeof msg - (size_t)n, ": an equation has one `=` (compare with `==`)");
    } else if (expected_words(exp, nexp) && expects_char(exp, nexp, ')')) {
        snprintf(msg + n, sizeof msg - (size_t)n, "; expected %s or `)`", expected_words(exp, nexp));
    } else if (expected_words(exp, nexp)) {
        snprintf(msg + n, sizeof msg - (size_t)n, "; expected %s", expected_words(exp, nexp));
    } else if (operator_or(exp, nexp, b, sizeof b)) {
        snprintf(msg + n, sizeof msg - (size_t)n, "; expected %s", b);
    }
    parse_syntax_error(p, *at, msg);
    return 0;
}
