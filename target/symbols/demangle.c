/* A small Itanium C++ ABI demangler: the mangled name is parsed into a tree
 * of nodes (types keep a left and a right part, so "void (*)(int)" and
 * "int (&) [3]" come out right), then printed.  Everything lives in fixed
 * pools of one call; a name that needs more, or a construct not handled
 * here, gives NULL rather than a guess. */
#include "target/symbols/demangle.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/xalloc.h"

#define MAX_NODES 4096
#define MAX_LIST 8192
#define MAX_SUBS 512
#define MAX_DEPTH 200
#define MAX_OUTPUT (64 * 1024)

enum kind {
    K_STR,      /* text */
    K_NESTED,   /* a::b */
    K_TEMPLATE, /* a<args> */
    K_PTR,      /* child then "*", "&" or "&&" */
    K_CV,       /* child then " const" etc. */
    K_FUNC,     /* function type: ret (may be -1), params, suffix */
    K_ARRAY,    /* child then " [dim]" */
    K_PTRMEM,   /* member type of class */
    K_ENCODING, /* [ret] name(params) suffix */
    K_PREFIXED, /* "vtable for " child */
    K_PACK,     /* a, b, c */
    K_SUFFIXED, /* child then text (abi tags, clone suffixes) */
    K_EXPAND,   /* Dp: the pattern once per element of the pack inside it */
};

struct node {
    enum kind kind;
    const char *text; /* K_STR, K_PTR, K_CV, K_ARRAY dim, K_PREFIXED, K_FUNC/K_ENCODING suffix */
    size_t text_len;
    int a, b;         /* child nodes (-1: none) */
    int list, count;  /* a range of node ids in the list pool */
};

struct demangler {
    const char *p, *end;
    struct node nodes[MAX_NODES];
    int node_count;
    int list[MAX_LIST];
    int list_count;
    int subs[MAX_SUBS];
    int sub_count;
    int params[64];   /* template arguments T_ refers to */
    int param_count;
    int depth;
    int pack_index;   /* while printing a K_EXPAND: the element; else -1 */
    char last_put;    /* last character ever appended, even if taken back
                       * (c++filt decides "> >" on that) */
    bool failed;
    char *out;
    size_t out_len, out_cap;
};

/* Decoded with a nested name, for what follows it. */
struct name_info {
    bool ends_with_template_args;
    bool ctor_dtor_conv;   /* no return type is encoded for these */
    const char *cv;        /* " const" ... of a member function */
    const char *ref;       /* " &" or " &&" */
};

static bool fail(struct demangler *d)
{
    d->failed = true;
    return false;
}

static int new_node(struct demangler *d, enum kind kind)
{
    if (d->failed || d->node_count >= MAX_NODES) {
        fail(d);
        return -1;
    }
    int id = d->node_count++;
    struct node *n = &d->nodes[id];
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    n->a = n->b = -1;
    return id;
}

static int str_node(struct demangler *d, const char *text, size_t len)
{
    int id = new_node(d, K_STR);
    if (id >= 0) {
        d->nodes[id].text = text;
        d->nodes[id].text_len = len;
    }
    return id;
}

static int lit_node(struct demangler *d, const char *text) { return str_node(d, text, strlen(text)); }

static int pair_node(struct demangler *d, enum kind kind, const char *text, int a, int b)
{
    if (a < 0 && kind != K_FUNC && kind != K_ENCODING)
        return fail(d), -1;
    int id = new_node(d, kind);
    if (id >= 0) {
        d->nodes[id].text = text;
        d->nodes[id].text_len = text ? strlen(text) : 0;
        d->nodes[id].a = a;
        d->nodes[id].b = b;
    }
    return id;
}

static void add_sub(struct demangler *d, int id)
{
    if (id < 0 || d->sub_count >= MAX_SUBS) {
        fail(d);
        return;
    }
    d->subs[d->sub_count++] = id;
}

static bool peek_is(const struct demangler *d, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(d->end - d->p) >= n && memcmp(d->p, s, n) == 0;
}

static bool eat(struct demangler *d, const char *s)
{
    if (!peek_is(d, s))
        return false;
    d->p += strlen(s);
    return true;
}

static char peek(const struct demangler *d, size_t i)
{
    return (size_t)(d->end - d->p) > i ? d->p[i] : '\0';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

/* [n] <decimal>; false when there are no digits. */
static bool parse_number(struct demangler *d, bool *negative, uint64_t *value)
{
    *negative = eat(d, "n");
    if (!is_digit(peek(d, 0)))
        return fail(d);
    uint64_t v = 0;
    while (is_digit(peek(d, 0))) {
        if (v > UINT64_MAX / 10 - 1)
            return fail(d);
        v = v * 10 + (uint64_t)(*d->p++ - '0');
    }
    *value = v;
    return true;
}

/* A list of nodes built while parsing; stored contiguously at the end. */
struct list_builder {
    int items[256];
    int count;
};

static bool list_push(struct demangler *d, struct list_builder *b, int id)
{
    if (id < 0 || b->count >= (int)(sizeof(b->items) / sizeof(b->items[0])))
        return fail(d);
    b->items[b->count++] = id;
    return true;
}

static bool list_store(struct demangler *d, const struct list_builder *b, int *first, int *count)
{
    if (d->list_count + b->count > MAX_LIST)
        return fail(d);
    memcpy(d->list + d->list_count, b->items, (size_t)b->count * sizeof(int));
    *first = d->list_count;
    *count = b->count;
    d->list_count += b->count;
    return true;
}

/* A parameter list of just "void" prints as "()". */
static void drop_lone_void(const struct demangler *d, struct list_builder *b)
{
    if (b->count == 1 && d->nodes[b->items[0]].kind == K_STR && d->nodes[b->items[0]].text_len == 4 &&
        memcmp(d->nodes[b->items[0]].text, "void", 4) == 0)
        b->count = 0;
}

static int parse_type(struct demangler *d);
static int parse_name(struct demangler *d, struct name_info *info, bool tag_templates);
static int parse_encoding(struct demangler *d, bool top);

/* <source-name> ::= <length> <identifier> */
static int parse_source_name(struct demangler *d)
{
    bool neg;
    uint64_t len;
    if (!parse_number(d, &neg, &len) || neg || len == 0 || len > (uint64_t)(d->end - d->p))
        return fail(d), -1;
    const char *s = d->p;
    d->p += len;
    if (len >= 10 && memcmp(s, "_GLOBAL__N", 10) == 0)
        return lit_node(d, "(anonymous namespace)");
    return str_node(d, s, (size_t)len);
}

static const struct {
    const char code[3];
    const char *name;
} operators[] = {
    {"nw", "operator new"}, {"na", "operator new[]"}, {"dl", "operator delete"}, {"da", "operator delete[]"},
    {"ps", "operator+"}, {"ng", "operator-"}, {"ad", "operator&"}, {"de", "operator*"}, {"co", "operator~"},
    {"pl", "operator+"}, {"mi", "operator-"}, {"ml", "operator*"}, {"dv", "operator/"}, {"rm", "operator%"},
    {"an", "operator&"}, {"or", "operator|"}, {"eo", "operator^"}, {"aS", "operator="}, {"pL", "operator+="},
    {"mI", "operator-="}, {"mL", "operator*="}, {"dV", "operator/="}, {"rM", "operator%="}, {"aN", "operator&="},
    {"oR", "operator|="}, {"eO", "operator^="}, {"ls", "operator<<"}, {"rs", "operator>>"}, {"lS", "operator<<="},
    {"rS", "operator>>="}, {"eq", "operator=="}, {"ne", "operator!="}, {"lt", "operator<"}, {"gt", "operator>"},
    {"le", "operator<="}, {"ge", "operator>="}, {"ss", "operator<=>"}, {"nt", "operator!"}, {"aa", "operator&&"},
    {"oo", "operator||"}, {"pp", "operator++"}, {"mm", "operator--"}, {"cm", "operator,"}, {"pm", "operator->*"},
    {"pt", "operator->"}, {"cl", "operator()"}, {"ix", "operator[]"}, {"qu", "operator?"}, {"aw", "operator co_await"},
};

/* Text of a node that is plain text (for constructor names). */
static bool node_is_text(const struct demangler *d, int id) { return id >= 0 && d->nodes[id].kind == K_STR; }

/* {lambda(params)#N} and {unnamed type#N}: "_" is the first (N = 1),
 * "<number>_" the number + 2nd. */
static int parse_unnamed(struct demangler *d)
{
    bool lambda = eat(d, "Ul");
    if (!lambda && !eat(d, "Ut"))
        return fail(d), -1;
    struct list_builder params = {.count = 0};
    if (lambda) {
        while (!eat(d, "E")) {
            if (d->p >= d->end || !list_push(d, &params, parse_type(d)))
                return fail(d), -1;
        }
        drop_lone_void(d, &params);
    }
    uint64_t n = 0;
    bool neg = false, numbered = is_digit(peek(d, 0));
    if (numbered && (!parse_number(d, &neg, &n) || n > 1000000))
        return fail(d), -1;
    if (!eat(d, "_"))
        return fail(d), -1;
    int fn = new_node(d, K_FUNC);
    if (fn < 0 || !list_store(d, &params, &d->nodes[fn].list, &d->nodes[fn].count))
        return -1;
    int id = pair_node(d, K_PREFIXED, lambda ? "{lambda" : "{unnamed type", fn, -1);
    if (id >= 0)
        d->nodes[id].b = numbered ? (int)n + 2 : 1;
    return id;
}

/* <unqualified-name>, with abi tags.  last_name is the last plain name of
 * the enclosing scope (for constructors and destructors). */
static int parse_unqualified(struct demangler *d, int last_name, struct name_info *info)
{
    int id = -1;
    char c = peek(d, 0);
    if (is_digit(c)) {
        id = parse_source_name(d);
    } else if (c == 'C' && (is_digit(peek(d, 1)) || peek(d, 1) == 'I')) {
        if (!node_is_text(d, last_name))
            return fail(d), -1;
        id = last_name;
        if (eat(d, "CI")) { /* inheriting constructor: named after the base */
            if (!is_digit(peek(d, 0)))
                return fail(d), -1;
            d->p++;
            int base = parse_type(d);
            for (int guard = 0; base >= 0 && guard < MAX_DEPTH && d->nodes[base].kind != K_STR; guard++)
                base = d->nodes[base].kind == K_TEMPLATE ? d->nodes[base].a
                       : d->nodes[base].kind == K_NESTED ? d->nodes[base].b
                                                         : -1;
            if (base < 0)
                return fail(d), -1;
            id = base;
        } else {
            d->p += 2;
        }
        info->ctor_dtor_conv = true;
    } else if (c == 'D' && (peek(d, 1) == '0' || peek(d, 1) == '1' || peek(d, 1) == '2' || peek(d, 1) == '4' ||
                            peek(d, 1) == '5')) {
        if (!node_is_text(d, last_name))
            return fail(d), -1;
        d->p += 2;
        id = pair_node(d, K_PREFIXED, "~", last_name, -1);
        info->ctor_dtor_conv = true;
    } else if (c == 'U' && (peek(d, 1) == 'l' || peek(d, 1) == 't')) {
        id = parse_unnamed(d);
    } else if (peek_is(d, "cv")) {
        d->p += 2;
        int t = parse_type(d);
        id = pair_node(d, K_PREFIXED, "operator ", t, -1);
        info->ctor_dtor_conv = true;
    } else if (peek_is(d, "li")) {
        d->p += 2;
        int s = parse_source_name(d);
        id = pair_node(d, K_PREFIXED, "operator\"\" ", s, -1);
    } else if (is_lower(c)) {
        for (size_t i = 0; i < sizeof(operators) / sizeof(operators[0]); i++) {
            if (peek_is(d, operators[i].code)) {
                d->p += 2;
                id = lit_node(d, operators[i].name);
                break;
            }
        }
    }
    if (id < 0)
        return fail(d), -1;
    while (eat(d, "B")) {
        int tag = parse_source_name(d);
        if (tag < 0)
            return -1;
        id = pair_node(d, K_SUFFIXED, NULL, id, tag);
    }
    return id;
}

/* The expressions compilers put in template arguments of library code
 * (enable_if<!is_array<T>::value>, _Index_tuple<Indexes...>): template
 * parameters, literals, pack expansions, "!" and unresolved names, printed
 * as c++filt does.  Anything else fails the whole name. */
static int parse_template_arg(struct demangler *d);
static int parse_template_args(struct demangler *d, int name, bool tag);
static int parse_template_param(struct demangler *d);
static int parse_prefix_components(struct demangler *d, struct name_info *info, bool tag, bool subst);

static int parse_expression(struct demangler *d)
{
    if (++d->depth > MAX_DEPTH || d->failed)
        return fail(d), -1;
    int id = -1;
    char c = peek(d, 0);
    if (c == 'L') {
        id = parse_template_arg(d);
    } else if (c == 'T') {
        id = parse_template_param(d);
    } else if (eat(d, "sp")) {
        id = pair_node(d, K_EXPAND, NULL, parse_expression(d), -1);
    } else if (eat(d, "nt")) {
        int operand = parse_expression(d);
        if (operand >= 0 && d->nodes[operand].kind != K_STR && d->nodes[operand].kind != K_NESTED &&
            d->nodes[operand].kind != K_TEMPLATE) {
            operand = pair_node(d, K_PREFIXED, "(", operand, -1);
            operand = pair_node(d, K_SUFFIXED, ")", operand, -1);
        }
        id = pair_node(d, K_PREFIXED, "!", operand, -1);
    } else if (eat(d, "sr")) {
        /* sr <type> <name> [args], or (clang) sr <prefix levels> E <name> */
        struct name_info info = {0};
        int scope = is_digit(peek(d, 0)) ? parse_prefix_components(d, &info, false, false) : parse_type(d);
        int name = parse_source_name(d);
        if (name >= 0 && peek(d, 0) == 'I')
            name = parse_template_args(d, name, false);
        if (scope >= 0 && name >= 0) {
            id = new_node(d, K_NESTED);
            if (id >= 0) {
                d->nodes[id].a = scope;
                d->nodes[id].b = name;
            }
        }
    } else if (is_digit(c)) {
        id = parse_source_name(d);
        if (id >= 0 && peek(d, 0) == 'I')
            id = parse_template_args(d, id, false);
    } else {
        fail(d);
    }
    d->depth--;
    return d->failed ? -1 : id;
}

/* <template-arg>: a type, a literal or a pack. */
static int parse_template_arg(struct demangler *d)
{
    if (eat(d, "J")) {
        struct list_builder b = {.count = 0};
        while (!eat(d, "E")) {
            if (d->p >= d->end || !list_push(d, &b, parse_template_arg(d)))
                return fail(d), -1;
        }
        int id = new_node(d, K_PACK);
        if (id < 0 || !list_store(d, &b, &d->nodes[id].list, &d->nodes[id].count))
            return -1;
        return id;
    }
    if (eat(d, "L")) {
        static const struct {
            char code;
            const char *suffix; /* NULL: printed as (type)value */
        } literal_kinds[] = {{'i', ""}, {'j', "u"}, {'l', "l"}, {'m', "ul"}, {'x', "ll"}, {'y', "ull"}};
        char code = peek(d, 0);
        if (code == 'b' && (peek(d, 1) == '0' || peek(d, 1) == '1') && peek(d, 2) == 'E') {
            d->p += 3;
            return lit_node(d, d->p[-2] == '1' ? "true" : "false");
        }
        if (code == '_' || code == 'Z')
            return fail(d), -1; /* an external name: not handled */
        const char *suffix = NULL;
        int type = -1;
        for (size_t i = 0; i < sizeof(literal_kinds) / sizeof(literal_kinds[0]); i++)
            if (literal_kinds[i].code == code)
                suffix = literal_kinds[i].suffix;
        if (suffix)
            d->p++;
        else if ((type = parse_type(d)) < 0)
            return -1;
        const char *start = d->p;
        bool neg;
        uint64_t v;
        if (!parse_number(d, &neg, &v) || !eat(d, "E"))
            return fail(d), -1;
        /* The digits as written ("n5" prints as "-5"). */
        const char *digits = start + (neg ? 1 : 0);
        size_t ndig = (size_t)(d->p - 1 - digits);
        int val = str_node(d, digits, ndig);
        if (neg)
            val = pair_node(d, K_PREFIXED, "-", val, -1);
        if (suffix)
            return pair_node(d, K_SUFFIXED, suffix, val, -1);
        /* (type)value */
        int cast = pair_node(d, K_PREFIXED, "(", type, -1);
        cast = pair_node(d, K_SUFFIXED, ")", cast, -1);
        int id = new_node(d, K_NESTED);
        if (id < 0)
            return -1;
        d->nodes[id].a = cast;
        d->nodes[id].b = val;
        d->nodes[id].text = ""; /* joined without "::" */
        return id;
    }
    if (eat(d, "X")) {
        int e = parse_expression(d);
        if (e < 0 || !eat(d, "E"))
            return fail(d), -1;
        return e;
    }
    return parse_type(d);
}

/* <template-args> ::= I <template-arg>+ E.  tag: these are the arguments
 * T_ refers to from now on. */
static int parse_template_args(struct demangler *d, int name, bool tag)
{
    if (!eat(d, "I"))
        return fail(d), -1;
    struct list_builder b = {.count = 0};
    if (tag)
        d->param_count = 0;
    while (!eat(d, "E")) {
        if (d->p >= d->end)
            return fail(d), -1;
        int arg = parse_template_arg(d);
        if (!list_push(d, &b, arg))
            return -1;
        if (tag) {
            if (d->param_count >= (int)(sizeof(d->params) / sizeof(d->params[0])))
                return fail(d), -1;
            d->params[d->param_count++] = arg;
        }
    }
    int id = new_node(d, K_TEMPLATE);
    if (id < 0 || !list_store(d, &b, &d->nodes[id].list, &d->nodes[id].count))
        return -1;
    d->nodes[id].a = name;
    return id;
}

static const struct {
    char code;
    const char *text;     /* as printed */
    const char *ctor;     /* the name its constructors print */
} std_abbreviations[] = {
    {'a', "std::allocator", "allocator"},
    {'b', "std::basic_string", "basic_string"},
    {'s', "std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "basic_string"},
    {'i', "std::basic_istream<char, std::char_traits<char> >", "basic_istream"},
    {'o', "std::basic_ostream<char, std::char_traits<char> >", "basic_ostream"},
    {'d', "std::basic_iostream<char, std::char_traits<char> >", "basic_iostream"},
};

/* <substitution> ::= S_ | S <seq-id> _ | Sa | Sb | ...  (not St).
 * *ctor_name: the constructor name, for abbreviations. */
static int parse_substitution(struct demangler *d, int *ctor_name)
{
    *ctor_name = -1;
    if (!eat(d, "S"))
        return fail(d), -1;
    char c = peek(d, 0);
    for (size_t i = 0; i < sizeof(std_abbreviations) / sizeof(std_abbreviations[0]); i++) {
        if (c == std_abbreviations[i].code) {
            d->p++;
            *ctor_name = lit_node(d, std_abbreviations[i].ctor);
            return lit_node(d, std_abbreviations[i].text);
        }
    }
    uint64_t index = 0;
    if (!eat(d, "_")) {
        while (peek(d, 0) != '_') {
            char x = peek(d, 0);
            int v;
            if (is_digit(x))
                v = x - '0';
            else if (x >= 'A' && x <= 'Z')
                v = x - 'A' + 10;
            else
                return fail(d), -1;
            if (index > MAX_SUBS)
                return fail(d), -1;
            index = index * 36 + (uint64_t)v;
            d->p++;
        }
        d->p++;
        index++;
    }
    if (index >= (uint64_t)d->sub_count)
        return fail(d), -1;
    return d->subs[index];
}

static int parse_template_param(struct demangler *d)
{
    if (!eat(d, "T"))
        return fail(d), -1;
    uint64_t index = 0;
    if (!eat(d, "_")) {
        bool neg;
        if (!parse_number(d, &neg, &index) || neg || !eat(d, "_"))
            return fail(d), -1;
        index++;
    }
    if (index >= (uint64_t)d->param_count)
        return fail(d), -1;
    return d->params[index];
}

static const char *parse_cv(struct demangler *d)
{
    bool r = eat(d, "r"), v = eat(d, "V"), k = eat(d, "K");
    if (r)
        return k ? (v ? " const volatile restrict" : " const restrict") : (v ? " volatile restrict" : " restrict");
    if (v)
        return k ? " const volatile" : " volatile";
    return k ? " const" : NULL;
}

/* <nested-name> ::= N [CV] [ref] <prefix> <unqualified-name> E */
static int parse_prefix_components(struct demangler *d, struct name_info *info, bool tag, bool subst);

static int parse_nested(struct demangler *d, struct name_info *info, bool tag)
{
    if (!eat(d, "N"))
        return fail(d), -1;
    info->cv = parse_cv(d);
    if (eat(d, "R"))
        info->ref = " &";
    else if (eat(d, "O"))
        info->ref = " &&";
    return parse_prefix_components(d, info, tag, true);
}

/* The components of a nested name up to and including its 'E'; every
 * prefix but the whole is a substitution candidate (none at all without
 * subst: the scope of an unresolved name, as c++filt counts). */
static int parse_prefix_components(struct demangler *d, struct name_info *info, bool tag, bool subst)
{
    int so_far = -1, last_name = -1;
    while (!eat(d, "E")) {
        if (d->p >= d->end || d->failed)
            return fail(d), -1;
        info->ends_with_template_args = false;
        /* template args keep what the name before them was (a template
         * constructor has no return type either) */
        if (peek(d, 0) != 'I')
            info->ctor_dtor_conv = false;
        int comp;
        bool is_sub = false;
        if (peek(d, 0) == 'S' && peek(d, 1) == 't') {
            d->p += 2;
            if (so_far >= 0)
                return fail(d), -1;
            so_far = lit_node(d, "std");
            continue; /* "std" is not a substitution candidate */
        } else if (peek(d, 0) == 'S') {
            if (so_far >= 0)
                return fail(d), -1;
            int ctor;
            comp = parse_substitution(d, &ctor);
            last_name = ctor;
            is_sub = true;
        } else if (peek(d, 0) == 'T') {
            if (so_far >= 0)
                return fail(d), -1;
            comp = parse_template_param(d);
            last_name = -1;
        } else if (peek(d, 0) == 'I') {
            if (so_far < 0)
                return fail(d), -1;
            so_far = parse_template_args(d, so_far, tag);
            info->ends_with_template_args = true;
            if (subst)
                add_sub(d, so_far);
            continue;
        } else if (peek(d, 0) == 'D' && (peek(d, 1) == 't' || peek(d, 1) == 'T')) {
            return fail(d), -1;
        } else {
            eat(d, "L"); /* internal linkage marker */
            comp = parse_unqualified(d, last_name, info);
            int plain = comp >= 0 && d->nodes[comp].kind == K_SUFFIXED ? d->nodes[comp].a : comp;
            if (plain >= 0 && d->nodes[plain].kind == K_STR)
                last_name = plain; /* without its abi tags */
        }
        if (comp < 0)
            return -1;
        if (so_far < 0) {
            so_far = comp;
        } else {
            int id = new_node(d, K_NESTED);
            if (id < 0)
                return -1;
            d->nodes[id].a = so_far;
            d->nodes[id].b = comp;
            so_far = id;
        }
        if (!is_sub && subst)
            add_sub(d, so_far);
    }
    if (so_far < 0 || d->failed)
        return fail(d), -1;
    /* The whole name is a candidate only as a type; the caller adds it. */
    if (subst && d->sub_count > 0 && d->subs[d->sub_count - 1] == so_far)
        d->sub_count--;
    return so_far;
}

/* <local-name> ::= Z <encoding> E <entity name> [<discriminator>]
 *                | Z <encoding> E s [<discriminator>] */
static int parse_local(struct demangler *d, struct name_info *info)
{
    if (!eat(d, "Z"))
        return fail(d), -1;
    int enc = parse_encoding(d, false);
    if (enc < 0 || !eat(d, "E"))
        return fail(d), -1;
    if (d->nodes[enc].kind == K_ENCODING)
        d->nodes[enc].a = -1; /* c++filt prints the scope without its return type */
    int entity;
    if (eat(d, "s")) {
        entity = lit_node(d, "string literal");
    } else {
        if (peek(d, 0) == 'd')
            return fail(d), -1; /* default argument scopes: not handled */
        entity = parse_name(d, info, false);
    }
    if (entity < 0)
        return -1;
    /* <discriminator> ::= _ <digit> | __ <number> _ : not printed. */
    if (eat(d, "__")) {
        bool neg;
        uint64_t v;
        if (!parse_number(d, &neg, &v) || !eat(d, "_"))
            return fail(d), -1;
    } else if (peek(d, 0) == '_' && is_digit(peek(d, 1))) {
        d->p += 2;
    }
    int id = new_node(d, K_NESTED);
    if (id < 0)
        return -1;
    d->nodes[id].a = enc;
    d->nodes[id].b = entity;
    return id;
}

static int parse_name(struct demangler *d, struct name_info *info, bool tag)
{
    if (++d->depth > MAX_DEPTH)
        return fail(d), -1;
    int id;
    char c = peek(d, 0);
    if (c == 'N') {
        id = parse_nested(d, info, tag);
    } else if (c == 'Z') {
        id = parse_local(d, info);
    } else if (c == 'S' && peek(d, 1) != 't') {
        int ctor;
        id = parse_substitution(d, &ctor);
        if (id >= 0 && peek(d, 0) == 'I') {
            id = parse_template_args(d, id, tag);
            info->ends_with_template_args = true;
        } else {
            fail(d); /* a bare substitution is a type, not a name */
            id = -1;
        }
    } else {
        bool in_std = eat(d, "St");
        eat(d, "L"); /* internal linkage: not printed */
        id = parse_unqualified(d, -1, info);
        if (in_std && id >= 0) {
            int std = lit_node(d, "std");
            int n = new_node(d, K_NESTED);
            if (n >= 0) {
                d->nodes[n].a = std;
                d->nodes[n].b = id;
            }
            id = n;
        }
        if (id >= 0 && peek(d, 0) == 'I') {
            add_sub(d, id); /* <unscoped-template-name> */
            id = parse_template_args(d, id, tag);
            info->ends_with_template_args = true;
        }
    }
    d->depth--;
    return d->failed ? -1 : id;
}

static int parse_builtin(struct demangler *d)
{
    static const struct {
        const char *code;
        const char *name;
    } builtins[] = {
        {"v", "void"}, {"w", "wchar_t"}, {"b", "bool"}, {"c", "char"}, {"a", "signed char"},
        {"h", "unsigned char"}, {"s", "short"}, {"t", "unsigned short"}, {"i", "int"}, {"j", "unsigned int"},
        {"l", "long"}, {"m", "unsigned long"}, {"x", "long long"}, {"y", "unsigned long long"},
        {"n", "__int128"}, {"o", "unsigned __int128"}, {"f", "float"}, {"d", "double"}, {"e", "long double"},
        {"g", "__float128"}, {"z", "..."}, {"Dd", "decimal64"}, {"De", "decimal128"}, {"Df", "decimal32"},
        {"Dh", "half"}, {"Di", "char32_t"}, {"Ds", "char16_t"}, {"Du", "char8_t"}, {"Da", "auto"},
        {"Dc", "decltype(auto)"}, {"Dn", "decltype(nullptr)"},
    };
    for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
        if (eat(d, builtins[i].code))
            return lit_node(d, builtins[i].name);
    return -1;
}

/* <function-type> ::= [CV] F [Y] <return type> <parameter types> [R|O] E */
static int parse_function_type(struct demangler *d, const char *cv)
{
    if (!eat(d, "F"))
        return fail(d), -1;
    eat(d, "Y");
    int ret = parse_type(d);
    struct list_builder b = {.count = 0};
    const char *ref = NULL;
    while (!eat(d, "E")) {
        if (d->p >= d->end || d->failed)
            return fail(d), -1;
        if (peek(d, 0) == 'R' && peek(d, 1) == 'E') {
            d->p++;
            ref = " &";
            continue;
        }
        if (peek(d, 0) == 'O' && peek(d, 1) == 'E') {
            d->p++;
            ref = " &&";
            continue;
        }
        if (!list_push(d, &b, parse_type(d)))
            return -1;
    }
    drop_lone_void(d, &b);
    int id = new_node(d, K_FUNC);
    if (id < 0 || ret < 0 || !list_store(d, &b, &d->nodes[id].list, &d->nodes[id].count))
        return fail(d), -1;
    d->nodes[id].a = ret;
    /* cv and ref qualifiers of the function type itself */
    const char *suffix = NULL;
    if (cv && ref)
        return fail(d), -1; /* rare enough: not handled */
    suffix = cv ? cv : ref;
    d->nodes[id].text = suffix;
    d->nodes[id].text_len = suffix ? strlen(suffix) : 0;
    return id;
}

static int parse_type(struct demangler *d)
{
    if (++d->depth > MAX_DEPTH || d->failed)
        return fail(d), -1;
    int id = -1;
    char c = peek(d, 0);
    struct name_info info = {0};
    if (c == 'r' || c == 'V' || c == 'K') {
        const char *cv = parse_cv(d);
        if (peek(d, 0) == 'F') {
            id = parse_function_type(d, cv);
        } else {
            int child = parse_type(d);
            id = pair_node(d, K_CV, cv, child, -1);
        }
        add_sub(d, id);
    } else if ((id = parse_builtin(d)) >= 0) {
        /* builtins are not substitution candidates */
    } else if (c == 'u') {
        d->p++;
        id = parse_source_name(d);
        add_sub(d, id);
    } else if (c == 'P' || c == 'R' || c == 'O') {
        d->p++;
        int child = parse_type(d);
        id = pair_node(d, K_PTR, c == 'P' ? "*" : c == 'R' ? "&" : "&&", child, -1);
        add_sub(d, id);
    } else if (c == 'F') {
        id = parse_function_type(d, NULL);
        add_sub(d, id);
    } else if (c == 'A') {
        d->p++;
        const char *dim = d->p;
        while (is_digit(peek(d, 0)))
            d->p++;
        size_t dim_len = (size_t)(d->p - dim);
        if (!eat(d, "_"))
            return fail(d), -1;
        int elem = parse_type(d);
        id = pair_node(d, K_ARRAY, NULL, elem, -1);
        if (id >= 0) {
            d->nodes[id].text = dim;
            d->nodes[id].text_len = dim_len;
        }
        add_sub(d, id);
    } else if (c == 'M') {
        d->p++;
        int cls = parse_type(d);
        int member = parse_type(d);
        id = pair_node(d, K_PTRMEM, NULL, member, cls);
        add_sub(d, id);
    } else if (c == 'T') {
        id = parse_template_param(d);
        add_sub(d, id);
        if (id >= 0 && peek(d, 0) == 'I') {
            id = parse_template_args(d, id, false);
            add_sub(d, id);
        }
    } else if (c == 'D' && peek(d, 1) == 'p') {
        d->p += 2;
        int pattern = parse_type(d);
        id = pair_node(d, K_EXPAND, NULL, pattern, -1);
        add_sub(d, id);
    } else if (c == 'S' && peek(d, 1) != 't') {
        int ctor;
        id = parse_substitution(d, &ctor);
        if (id >= 0 && peek(d, 0) == 'I') {
            id = parse_template_args(d, id, false);
            add_sub(d, id);
        }
    } else if (c == 'N' || c == 'Z' || is_digit(c) || (c == 'S' && peek(d, 1) == 't')) {
        id = parse_name(d, &info, false);
        add_sub(d, id);
    } else {
        fail(d);
    }
    d->depth--;
    return d->failed ? -1 : id;
}

/* <call-offset> ::= h <number> _ | v <number> _ <number> _ */
static bool parse_call_offset(struct demangler *d)
{
    bool neg;
    uint64_t v;
    if (eat(d, "h"))
        return parse_number(d, &neg, &v) && eat(d, "_");
    if (eat(d, "v"))
        return parse_number(d, &neg, &v) && eat(d, "_") && parse_number(d, &neg, &v) && eat(d, "_");
    return fail(d);
}

static int parse_special(struct demangler *d)
{
    static const struct {
        const char *code;
        const char *text;
        bool type; /* followed by a type, else by a name */
    } specials[] = {
        {"TV", "vtable for ", true}, {"TT", "VTT for ", true}, {"TI", "typeinfo for ", true},
        {"TS", "typeinfo name for ", true}, {"GV", "guard variable for ", false},
        {"TH", "TLS init function for ", false}, {"TW", "TLS wrapper function for ", false},
    };
    for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++) {
        if (eat(d, specials[i].code)) {
            struct name_info info = {0};
            int child = specials[i].type ? parse_type(d) : parse_name(d, &info, false);
            return pair_node(d, K_PREFIXED, specials[i].text, child, -1);
        }
    }
    if (eat(d, "Th") || eat(d, "Tv")) {
        bool virt = d->p[-1] == 'v';
        d->p--;
        if (!parse_call_offset(d))
            return -1;
        return pair_node(d, K_PREFIXED, virt ? "virtual thunk to " : "non-virtual thunk to ",
                         parse_encoding(d, false), -1);
    }
    if (eat(d, "GTt"))
        return pair_node(d, K_PREFIXED, "transaction clone for ", parse_encoding(d, false), -1);
    if (eat(d, "Tc")) {
        if (!parse_call_offset(d) || !parse_call_offset(d))
            return -1;
        return pair_node(d, K_PREFIXED, "covariant return thunk to ", parse_encoding(d, false), -1);
    }
    return fail(d), -1;
}

static bool at_encoding_end(const struct demangler *d)
{
    return d->p >= d->end || peek(d, 0) == 'E' || peek(d, 0) == '.';
}

static int parse_encoding(struct demangler *d, bool top)
{
    (void)top;
    if (++d->depth > MAX_DEPTH)
        return fail(d), -1;
    if (peek(d, 0) == 'T' || (peek(d, 0) == 'G' && peek(d, 1) != '\0')) {
        int id = parse_special(d);
        d->depth--;
        return id;
    }
    struct name_info info = {0};
    int name = parse_name(d, &info, true);
    if (name < 0)
        return -1;
    if (at_encoding_end(d)) {
        d->depth--;
        return name; /* a variable */
    }
    int ret = -1;
    if (info.ends_with_template_args && !info.ctor_dtor_conv) {
        ret = parse_type(d);
        if (ret < 0)
            return -1;
    }
    struct list_builder b = {.count = 0};
    while (!at_encoding_end(d)) {
        if (!list_push(d, &b, parse_type(d)))
            return -1;
    }
    drop_lone_void(d, &b);
    int id = new_node(d, K_ENCODING);
    if (id < 0 || !list_store(d, &b, &d->nodes[id].list, &d->nodes[id].count))
        return -1;
    d->nodes[id].a = ret;
    d->nodes[id].b = name;
    /* member function qualifiers: " const" then " &" */
    static const char *const combos[][3] = {
        {" const", " &", " const &"}, {" const", " &&", " const &&"}, {" volatile", " &", " volatile &"},
        {" volatile", " &&", " volatile &&"}, {" const volatile", " &", " const volatile &"},
        {" const volatile", " &&", " const volatile &&"},
    };
    const char *suffix = info.cv ? info.cv : info.ref;
    if (info.cv && info.ref) {
        suffix = NULL;
        for (size_t i = 0; i < sizeof(combos) / sizeof(combos[0]); i++)
            if (strcmp(combos[i][0], info.cv) == 0 && strcmp(combos[i][1], info.ref) == 0)
                suffix = combos[i][2];
        if (!suffix)
            return fail(d), -1;
    }
    d->nodes[id].text = suffix;
    d->nodes[id].text_len = suffix ? strlen(suffix) : 0;
    d->depth--;
    return id;
}

/* ---- printing ---- */

static void put(struct demangler *d, const char *s, size_t n)
{
    if (d->failed || n == 0)
        return;
    if (d->out_len + n + 1 > MAX_OUTPUT) {
        fail(d);
        return;
    }
    if (d->out_len + n + 1 > d->out_cap) {
        size_t cap = d->out_cap ? d->out_cap : 128;
        while (cap < d->out_len + n + 1)
            cap *= 2;
        d->out = xrealloc(d->out, cap);
        d->out_cap = cap;
    }
    memcpy(d->out + d->out_len, s, n);
    d->out_len += n;
    d->last_put = s[n - 1];
    d->out[d->out_len] = '\0';
}

static void puts_(struct demangler *d, const char *s) { put(d, s, strlen(s)); }

static char last_char(const struct demangler *d) { return d->out_len ? d->out[d->out_len - 1] : '\0'; }

static void print(struct demangler *d, int id);
static void print_left(struct demangler *d, int id);
static void print_right(struct demangler *d, int id);

/* Whether a type prints something after the name it declares. */
static bool has_right(const struct demangler *d, int id)
{
    for (int guard = 0; id >= 0 && guard < MAX_DEPTH; guard++) {
        const struct node *n = &d->nodes[id];
        switch (n->kind) {
        case K_FUNC:
        case K_ARRAY:
            return true;
        case K_PTR:
        case K_CV:
        case K_PTRMEM:
            id = n->a;
            break;
        default:
            return false;
        }
    }
    return false;
}

static bool is_func_or_array(const struct demangler *d, int id)
{
    return id >= 0 && (d->nodes[id].kind == K_FUNC || d->nodes[id].kind == K_ARRAY);
}

static void print_list(struct demangler *d, int first, int count)
{
    bool any = false;
    for (int i = 0; i < count; i++) {
        size_t before = d->out_len;
        if (any)
            puts_(d, ", ");
        size_t start = d->out_len;
        print(d, d->list[first + i]);
        if (d->out_len == start && !d->failed) {
            d->out_len = before; /* an empty pack: not even a comma */
            if (d->out)
                d->out[before] = '\0';
            continue;
        }
        any = true;
    }
}

static void print_params(struct demangler *d, int first, int count)
{
    puts_(d, "(");
    print_list(d, first, count);
    puts_(d, ")");
}

/* Inside an expansion a pack stands for its current element. */
static int resolve(const struct demangler *d, int id)
{
    for (int guard = 0; id >= 0 && guard < MAX_DEPTH; guard++) {
        const struct node *n = &d->nodes[id];
        if (n->kind != K_PACK || d->pack_index < 0 || d->pack_index >= n->count)
            return id;
        id = d->list[n->list + d->pack_index];
    }
    return id;
}

static bool is_reference(const struct node *n)
{
    return n->kind == K_PTR && n->text[0] == '&';
}

/* T& & and T&& & are T&, T&& && is T&& (reference collapsing, as c++filt
 * prints substituted template parameters).  Returns the node that prints
 * and sets *text to the reference to print. */
static int collapse_references(const struct demangler *d, int id, const char **text)
{
    const struct node *n = &d->nodes[id];
    *text = n->text;
    int child = resolve(d, n->a);
    for (int guard = 0; child >= 0 && guard < MAX_DEPTH && is_reference(&d->nodes[child]); guard++) {
        if (strcmp(d->nodes[child].text, "&") == 0)
            *text = "&";
        child = resolve(d, d->nodes[child].a);
    }
    return child;
}

/* The size of the first pack in a pattern, or -1. */
static int pack_size(const struct demangler *d, int id, int depth)
{
    if (id < 0 || depth > MAX_DEPTH)
        return -1;
    const struct node *n = &d->nodes[id];
    if (n->kind == K_PACK)
        return n->count;
    if (n->kind == K_EXPAND)
        return -1; /* a nested expansion owns its packs */
    int size = pack_size(d, n->a, depth + 1);
    if (size < 0)
        size = pack_size(d, n->b, depth + 1);
    if (n->kind == K_TEMPLATE || n->kind == K_FUNC || n->kind == K_ENCODING)
        for (int i = 0; size < 0 && i < n->count; i++)
            size = pack_size(d, d->list[n->list + i], depth + 1);
    return size;
}

static void print_left(struct demangler *d, int id)
{
    if (d->failed || id < 0 || ++d->depth > MAX_DEPTH * 4)
        return (void)fail(d);
    id = resolve(d, id);
    const struct node *n = &d->nodes[id];
    switch (n->kind) {
    case K_PTR: {
        const char *text = n->text;
        int child = is_reference(n) ? collapse_references(d, id, &text) : resolve(d, n->a);
        if (child < 0) {
            fail(d);
            break;
        }
        print_left(d, child);
        if (d->nodes[child].kind == K_ARRAY)
            puts_(d, " ");
        if (is_func_or_array(d, child))
            puts_(d, "(");
        puts_(d, text);
        break;
    }
    case K_CV:
        print_left(d, n->a);
        put(d, n->text, n->text_len);
        break;
    case K_FUNC:
        print_left(d, n->a);
        if (!has_right(d, n->a))
            puts_(d, " ");
        break;
    case K_ARRAY:
        print_left(d, n->a);
        break;
    case K_PTRMEM:
        print_left(d, n->a);
        if (d->nodes[n->a].kind == K_ARRAY)
            puts_(d, " ");
        if (is_func_or_array(d, n->a)) {
            puts_(d, "(");
        } else if (last_char(d) != ' ') {
            puts_(d, " ");
        }
        print(d, n->b);
        puts_(d, "::*");
        break;
    default:
        print(d, id);
        break;
    }
    d->depth--;
}

static void print_right(struct demangler *d, int id)
{
    if (d->failed || id < 0 || ++d->depth > MAX_DEPTH * 4)
        return (void)fail(d);
    id = resolve(d, id);
    const struct node *n = &d->nodes[id];
    switch (n->kind) {
    case K_PTR: {
        const char *text;
        int child = is_reference(n) ? collapse_references(d, id, &text) : resolve(d, n->a);
        if (is_func_or_array(d, child))
            puts_(d, ")");
        print_right(d, child);
        break;
    }
    case K_PTRMEM:
        if (is_func_or_array(d, n->a))
            puts_(d, ")");
        print_right(d, n->a);
        break;
    case K_CV:
        print_right(d, n->a);
        break;
    case K_FUNC:
        print_params(d, n->list, n->count);
        print_right(d, n->a);
        put(d, n->text, n->text_len);
        break;
    case K_ARRAY:
        if (last_char(d) != ']')
            puts_(d, " ");
        puts_(d, "[");
        put(d, n->text, n->text_len);
        puts_(d, "]");
        print_right(d, n->a);
        break;
    default:
        break;
    }
    d->depth--;
}

static void print(struct demangler *d, int id)
{
    if (d->failed || id < 0 || ++d->depth > MAX_DEPTH * 4)
        return (void)fail(d);
    id = resolve(d, id);
    const struct node *n = &d->nodes[id];
    switch (n->kind) {
    case K_STR:
        put(d, n->text, n->text_len);
        break;
    case K_NESTED:
        print(d, n->a);
        if (n->text)
            put(d, n->text, n->text_len);
        else
            puts_(d, "::");
        print(d, n->b);
        break;
    case K_TEMPLATE:
        print(d, n->a);
        if (last_char(d) == '<')
            puts_(d, " ");
        puts_(d, "<");
        print_list(d, n->list, n->count);
        if (d->last_put == '>')
            puts_(d, " ");
        puts_(d, ">");
        break;
    case K_PTR:
    case K_CV:
    case K_FUNC:
    case K_ARRAY:
    case K_PTRMEM:
        print_left(d, id);
        print_right(d, id);
        break;
    case K_ENCODING:
        if (n->a >= 0) {
            print_left(d, n->a);
            if (!has_right(d, n->a))
                puts_(d, " ");
        }
        print(d, n->b);
        print_params(d, n->list, n->count);
        if (n->a >= 0)
            print_right(d, n->a);
        put(d, n->text, n->text_len);
        break;
    case K_PREFIXED:
        if (n->text_len > 0 && n->text[0] == '{') {
            /* {lambda(params)#N} / {unnamed type#N} */
            put(d, n->text, n->text_len);
            if (n->text[1] == 'l') {
                const struct node *fn = &d->nodes[n->a];
                print_params(d, fn->list, fn->count);
            }
            char num[32];
            int len = snprintf(num, sizeof(num), "#%d}", n->b);
            put(d, num, (size_t)len);
            break;
        }
        put(d, n->text, n->text_len);
        print(d, n->a);
        break;
    case K_SUFFIXED:
        print(d, n->a);
        if (n->b >= 0) {
            puts_(d, "[abi:");
            print(d, n->b);
            puts_(d, "]");
        } else {
            put(d, n->text, n->text_len);
        }
        break;
    case K_PACK:
        print_list(d, n->list, n->count);
        break;
    case K_EXPAND: {
        int size = pack_size(d, n->a, 0);
        if (size < 0 || d->pack_index >= 0) {
            print(d, n->a); /* no pack inside, or nested: print as is */
            break;
        }
        for (int i = 0; i < size && !d->failed; i++) {
            size_t before = d->out_len;
            if (i > 0)
                puts_(d, ", ");
            size_t start = d->out_len;
            d->pack_index = i;
            print(d, n->a);
            d->pack_index = -1;
            if (d->out_len == start && d->out) {
                d->out_len = before;
                d->out[before] = '\0';
            }
        }
        break;
    }
    }
    d->depth--;
}

/* ".cold", ".isra.0", ".constprop.0.isra.1": each "[.name][.digits]*"
 * group prints as " [clone .group]". */
static bool print_clone_suffixes(struct demangler *d)
{
    while (d->p < d->end) {
        if (d->p[0] != '.' || !(is_lower(peek(d, 1)) || peek(d, 1) == '_' || is_digit(peek(d, 1))))
            return fail(d);
        const char *start = d->p++;
        while (is_lower(peek(d, 0)) || peek(d, 0) == '_')
            d->p++;
        while (peek(d, 0) == '.' && is_digit(peek(d, 1))) {
            d->p++;
            while (is_digit(peek(d, 0)))
                d->p++;
        }
        puts_(d, " [clone ");
        put(d, start, (size_t)(d->p - start));
        puts_(d, "]");
    }
    return !d->failed;
}

char *demangle_cxx(const char *name)
{
    if (!name || strncmp(name, "_Z", 2) != 0)
        return NULL;
    /* "name@VERSION" / "name@@VERSION" (symbol versions in .symtab): the
     * version is kept as it is. */
    const char *at = strchr(name, '@');
    struct demangler *d = xcalloc(1, sizeof(*d));
    d->p = name + 2;
    d->end = at ? at : name + strlen(name);
    d->pack_index = -1;
    int top = parse_encoding(d, true);
    char *result = NULL;
    if (top >= 0 && !d->failed) {
        d->depth = 0;
        print(d, top);
        if (!d->failed && print_clone_suffixes(d) && d->p == d->end) {
            if (at)
                puts_(d, at);
            if (!d->failed)
                result = d->out;
        }
    }
    if (!result)
        free(d->out);
    free(d);
    return result;
}
