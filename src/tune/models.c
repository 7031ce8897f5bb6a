/* The built-in models, generated from their architectures, and the model
 * file. Names and shapes follow the PyTorch modules' named_parameters():
 * torchvision's resnet50, transformers' BertModel (bert-large-uncased,
 * pooler included), GPT2Model (124M, tied head counted once) and
 * LlamaForCausalLM (Llama 2 7B). */
#include "tune.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const dl_model_names[] = {"resnet50", "bert-large", "gpt2", "llama2-7b"};
const size_t dl_model_count = DL_ARRAY_SIZE(dl_model_names);

uint64_t dl_tensor_bytes(const dl_tensor_t *t)
{
    return t->numel * (uint64_t)dl_dtype_size(t->dtype);
}

uint64_t dl_model_params(const dl_model_t *m)
{
    uint64_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        n += m->t[i].numel;
    return n;
}

void dl_model_free(dl_model_t *m)
{
    free(m->t);
    memset(m, 0, sizeof(*m));
}

static dl_tensor_t *push(dl_model_t *m)
{
    if (DL_GROW(m->t, m->n, m->cap, 64) != DL_OK)
        return NULL;
    dl_tensor_t *t = &m->t[m->n++];
    memset(t, 0, sizeof(*t));
    return t;
}

/* One parameter: its dims (ndim of them), the name printf-formatted. */
static int add(dl_model_t *m, dl_dtype_t dt, const int64_t *dims, int ndim, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int add(dl_model_t *m, dl_dtype_t dt, const int64_t *dims, int ndim, const char *fmt, ...)
{
    dl_tensor_t *t = push(m);
    if (!t)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof(t->name), fmt, ap);
    va_end(ap);
    t->ndim = ndim;
    t->numel = 1;
    t->dtype = dt;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = dims[i];
        t->numel *= (uint64_t)dims[i];
    }
    return 0;
}

/* D(a, b, ...): the dims and their count, as add() takes them. */
#define D(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8)
#define ADD add

/* A Linear layer: weight [out, in], then bias [out] unless bias is 0. */
static int linear(dl_model_t *m, dl_dtype_t dt, const char *p, int64_t in, int64_t out, int bias)
{
    int r = ADD(m, dt, D(out, in), "%s.weight", p);
    return r || !bias ? r : ADD(m, dt, D(out), "%s.bias", p);
}

static int norm(dl_model_t *m, dl_dtype_t dt, const char *p, int64_t n, int bias)
{
    int r = ADD(m, dt, D(n), "%s.weight", p);
    return r || !bias ? r : ADD(m, dt, D(n), "%s.bias", p);
}

static int conv(dl_model_t *m, dl_dtype_t dt, const char *p, int64_t in, int64_t out, int64_t k)
{
    return ADD(m, dt, D(out, in, k, k), "%s.weight", p);
}

/* torchvision resnet50: Bottleneck blocks [3, 4, 6, 3], expansion 4. */
static int resnet50(dl_model_t *m, dl_dtype_t dt)
{
    static const int blocks[4] = {3, 4, 6, 3};
    int r = conv(m, dt, "conv1", 3, 64, 7) || norm(m, dt, "bn1", 64, 1);
    int64_t inplanes = 64;
    char p[96];
    for (int l = 0; l < 4 && !r; l++) {
        int64_t planes = 64 << l, width = planes, outp = planes * 4;
        for (int b = 0; b < blocks[l] && !r; b++) {
            char q[64];
            snprintf(q, sizeof(q), "layer%d.%d", l + 1, b);
#define P(s) (snprintf(p, sizeof(p), "%s.%s", q, s), p)
            r = conv(m, dt, P("conv1"), inplanes, width, 1) || norm(m, dt, P("bn1"), width, 1) ||
                conv(m, dt, P("conv2"), width, width, 3) || norm(m, dt, P("bn2"), width, 1) ||
                conv(m, dt, P("conv3"), width, outp, 1) || norm(m, dt, P("bn3"), outp, 1);
            if (!r && b == 0)
                r = conv(m, dt, P("downsample.0"), inplanes, outp, 1) ||
                    norm(m, dt, P("downsample.1"), outp, 1);
#undef P
            inplanes = outp;
        }
    }
    return r || linear(m, dt, "fc", 2048, 1000, 1);
}

/* BertModel, bert-large-uncased: 24 layers, hidden 1024, FFN 4096. */
static int bert_large(dl_model_t *m, dl_dtype_t dt)
{
    const int64_t h = 1024, ff = 4096;
    int r = ADD(m, dt, D(30522, h), "embeddings.word_embeddings.weight") ||
            ADD(m, dt, D(512, h), "embeddings.position_embeddings.weight") ||
            ADD(m, dt, D(2, h), "embeddings.token_type_embeddings.weight") ||
            norm(m, dt, "embeddings.LayerNorm", h, 1);
    char p[96];
    for (int i = 0; i < 24 && !r; i++) {
#define P(s) (snprintf(p, sizeof(p), "encoder.layer.%d.%s", i, s), p)
        r = linear(m, dt, P("attention.self.query"), h, h, 1) ||
            linear(m, dt, P("attention.self.key"), h, h, 1) ||
            linear(m, dt, P("attention.self.value"), h, h, 1) ||
            linear(m, dt, P("attention.output.dense"), h, h, 1) ||
            norm(m, dt, P("attention.output.LayerNorm"), h, 1) ||
            linear(m, dt, P("intermediate.dense"), h, ff, 1) ||
            linear(m, dt, P("output.dense"), ff, h, 1) || norm(m, dt, P("output.LayerNorm"), h, 1);
#undef P
    }
    return r || linear(m, dt, "pooler.dense", h, h, 1);
}

/* GPT2Model (124M): 12 layers, 768 wide; Conv1D weights are [in, out]. */
static int gpt2(dl_model_t *m, dl_dtype_t dt)
{
    const int64_t h = 768;
    int r = ADD(m, dt, D(50257, h), "wte.weight") || ADD(m, dt, D(1024, h), "wpe.weight");
    char p[96];
    for (int i = 0; i < 12 && !r; i++) {
#define P(s) (snprintf(p, sizeof(p), "h.%d.%s", i, s), p)
        r = norm(m, dt, P("ln_1"), h, 1) ||
            ADD(m, dt, D(h, 3 * h), "h.%d.attn.c_attn.weight", i) ||
            ADD(m, dt, D(3 * h), "h.%d.attn.c_attn.bias", i) ||
            ADD(m, dt, D(h, h), "h.%d.attn.c_proj.weight", i) ||
            ADD(m, dt, D(h), "h.%d.attn.c_proj.bias", i) || norm(m, dt, P("ln_2"), h, 1) ||
            ADD(m, dt, D(h, 4 * h), "h.%d.mlp.c_fc.weight", i) ||
            ADD(m, dt, D(4 * h), "h.%d.mlp.c_fc.bias", i) ||
            ADD(m, dt, D(4 * h, h), "h.%d.mlp.c_proj.weight", i) ||
            ADD(m, dt, D(h), "h.%d.mlp.c_proj.bias", i);
#undef P
    }
    return r || norm(m, dt, "ln_f", h, 1);
}

/* LlamaForCausalLM, Llama 2 7B: 32 layers, 4096 wide, FFN 11008, untied head. */
static int llama2_7b(dl_model_t *m, dl_dtype_t dt)
{
    const int64_t h = 4096, ff = 11008, v = 32000;
    int r = ADD(m, dt, D(v, h), "model.embed_tokens.weight");
    char p[96];
    for (int i = 0; i < 32 && !r; i++) {
#define P(s) (snprintf(p, sizeof(p), "model.layers.%d.%s", i, s), p)
        r = linear(m, dt, P("self_attn.q_proj"), h, h, 0) ||
            linear(m, dt, P("self_attn.k_proj"), h, h, 0) ||
            linear(m, dt, P("self_attn.v_proj"), h, h, 0) ||
            linear(m, dt, P("self_attn.o_proj"), h, h, 0) ||
            linear(m, dt, P("mlp.gate_proj"), h, ff, 0) || linear(m, dt, P("mlp.up_proj"), h, ff, 0) ||
            linear(m, dt, P("mlp.down_proj"), ff, h, 0) ||
            norm(m, dt, P("input_layernorm"), h, 0) ||
            norm(m, dt, P("post_attention_layernorm"), h, 0);
#undef P
    }
    return r || norm(m, dt, "model.norm", h, 0) || linear(m, dt, "lm_head", h, v, 0);
}

dl_status_t dl_model_builtin(const char *name, dl_dtype_t dtype, dl_model_t *m)
{
    static int (*const gen[])(dl_model_t *, dl_dtype_t) = {resnet50, bert_large, gpt2, llama2_7b};
    memset(m, 0, sizeof(*m));
    for (size_t i = 0; i < dl_model_count; i++)
        if (strcmp(name, dl_model_names[i]) == 0) {
            snprintf(m->name, sizeof(m->name), "%s", name);
            if (gen[i](m, dtype)) {
                dl_model_free(m);
                return DL_ERR_NOMEM;
            }
            return DL_OK;
        }
    return DL_ERR_USAGE;
}

/* ---- the model file ---- */

static int grad_dtype(const char *s, dl_dtype_t *dt)
{
    static const char *const ok[] = {"float32", "float16", "bfloat16"};
    for (size_t i = 0; i < DL_ARRAY_SIZE(ok); i++)
        if (strcmp(s, ok[i]) == 0)
            for (int d = 0; d < DL_DT_COUNT; d++)
                if (strcmp(dl_dtype_names[d], s) == 0) {
                    *dt = (dl_dtype_t)d;
                    return 1;
                }
    return 0;
}

static int only_keys(const cJSON *o, const char *const *keys, size_t n, const char **bad)
{
    for (const cJSON *k = o->child; k; k = k->next) {
        size_t i = 0;
        while (i < n && strcmp(k->string, keys[i]) != 0)
            i++;
        if (i == n) {
            *bad = k->string;
            return 0;
        }
    }
    return 1;
}

/* A whole number in 1..2^53 (JSON numbers are doubles). */
static int count_of(const cJSON *j, uint64_t *v)
{
    if (!cJSON_IsNumber(j) || !(j->valuedouble >= 1) || j->valuedouble > 9007199254740992.0 ||
        j->valuedouble != (double)(uint64_t)j->valuedouble)
        return 0;
    *v = (uint64_t)j->valuedouble;
    return 1;
}

static const char *parse_tensor(const cJSON *j, dl_tensor_t *t)
{
    static const char *const keys[] = {"name", "shape", "numel", "dtype"};
    const char *bad = NULL;
    static char msg[160];
    if (!cJSON_IsObject(j))
        return "is not an object";
    if (!only_keys(j, keys, DL_ARRAY_SIZE(keys), &bad)) {
        snprintf(msg, sizeof(msg), "has an unknown key '%.60s'", bad);
        return msg;
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
    const cJSON *numel = cJSON_GetObjectItemCaseSensitive(j, "numel");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(j, "dtype");
    if (!cJSON_IsString(name) || !name->valuestring[0] ||
        strlen(name->valuestring) >= sizeof(t->name))
        return "needs a \"name\" (a non-empty string under 160 characters)";
    snprintf(t->name, sizeof(t->name), "%s", name->valuestring);
    if (!shape && !numel)
        return "needs a \"shape\" or a \"numel\"";
    if (dtype && (!cJSON_IsString(dtype) || !grad_dtype(dtype->valuestring, &t->dtype)))
        return "has a dtype other than float32, float16 or bfloat16";
    uint64_t n = 1;
    if (shape) {
        int nd = cJSON_IsArray(shape) ? cJSON_GetArraySize(shape) : -1;
        if (nd < 0 || nd > DL_TENSOR_MAXDIM)
            return "has a \"shape\" that is not a list of at most 8 dimensions";
        t->ndim = nd;
        for (int d = 0; d < nd; d++) {
            uint64_t v;
            if (!count_of(cJSON_GetArrayItem(shape, d), &v))
                return "has a dimension that is not a whole number >= 1";
            t->shape[d] = (int64_t)v;
            if (n > UINT64_MAX / 16 / v)
                return "is too large";
            n *= v;
        }
    }
    if (numel) {
        uint64_t v;
        if (!count_of(numel, &v))
            return "has a \"numel\" that is not a whole number >= 1";
        if (shape && v != n)
            return "has a \"numel\" that disagrees with its \"shape\"";
        n = v;
    }
    t->numel = n;
    return NULL;
}

dl_status_t dl_model_parse(const char *text, const char *what, dl_dtype_t def, dl_model_t *m)
{
    cJSON *root = cJSON_Parse(text);
    static const char *const keys[] = {"model", "tensors", "comment"};
    const char *bad = NULL;
    dl_status_t st = DL_ERR_INPUT;
    memset(m, 0, sizeof(*m));
    const cJSON *ts = root ? cJSON_GetObjectItemCaseSensitive(root, "tensors") : NULL;
    const cJSON *name = root ? cJSON_GetObjectItemCaseSensitive(root, "model") : NULL;
    if (!cJSON_IsObject(root)) {
        dl_err("%s: not a JSON object (a model file is {\"model\": ..., \"tensors\": [...]})", what);
        goto out;
    }
    if (!only_keys(root, keys, DL_ARRAY_SIZE(keys), &bad)) {
        dl_err("%s: unknown key '%s' (known: model, tensors, comment)", what, bad);
        goto out;
    }
    if (name && !cJSON_IsString(name)) {
        dl_err("%s: \"model\" must be a string", what);
        goto out;
    }
    if (!cJSON_IsArray(ts) || cJSON_GetArraySize(ts) == 0) {
        dl_err("%s: \"tensors\" must be a non-empty list", what);
        goto out;
    }
    snprintf(m->name, sizeof(m->name), "%s", name ? name->valuestring : "model");
    int i = 0;
    for (const cJSON *j = ts->child; j; j = j->next, i++) {
        dl_tensor_t *t = push(m);
        if (!t) {
            st = DL_ERR_NOMEM;
            goto out;
        }
        t->dtype = def;
        const char *why = parse_tensor(j, t);
        for (size_t k = 0; !why && k + 1 < m->n; k++)
            if (strcmp(m->t[k].name, t->name) == 0)
                why = "repeats an earlier tensor's name (shared parameters go in once)";
        if (why) {
            dl_err("%s: tensor %d%s%s%s %s", what, i, t->name[0] ? " (" : "", t->name,
                   t->name[0] ? ")" : "", why);
            goto out;
        }
    }
    st = DL_OK;
out:
    if (st != DL_OK)
        dl_model_free(m);
    cJSON_Delete(root);
    return st;
}

char *dl_model_to_json(const dl_model_t *m)
{
    cJSON *root = cJSON_CreateObject(), *ts = NULL;
    if (root) {
        cJSON_AddStringToObject(root, "model", m->name);
        ts = cJSON_AddArrayToObject(root, "tensors");
    }
    for (size_t i = 0; ts && i < m->n; i++) {
        const dl_tensor_t *t = &m->t[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(ts, o);
        cJSON_AddStringToObject(o, "name", t->name);
        if (t->ndim > 0) {
            cJSON *s = cJSON_AddArrayToObject(o, "shape");
            for (int d = 0; d < t->ndim; d++)
                cJSON_AddItemToArray(s, cJSON_CreateNumber((double)t->shape[d]));
        } else
            cJSON_AddNumberToObject(o, "numel", (double)t->numel);
        cJSON_AddStringToObject(o, "dtype", dl_dtype_names[t->dtype]);
    }
    char *s = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return s;
}

dl_status_t dl_model_load(const char *name_or_path, dl_dtype_t dtype, dl_model_t *m)
{
    if (!strchr(name_or_path, '/') && !strstr(name_or_path, ".json")) {
        dl_status_t st = dl_model_builtin(name_or_path, dtype, m);
        static const char *const builtin[] = {"resnet50", "bert-large", "gpt2", "llama2-7b"};
        char mean[96] = "";
        dl_suggest_append(mean, sizeof(mean), name_or_path, builtin, DL_ARRAY_SIZE(builtin));
        if (st == DL_ERR_USAGE)
            dl_err("--model %s: not a built-in model (resnet50, bert-large, gpt2, llama2-7b) "
                   "nor a model file (a path ending in .json)%s", name_or_path, mean);
        return st;
    }
    char *text = NULL;
    size_t len = 0;
    if (dl_read_file(name_or_path, &text, &len) != DL_OK) {
        dl_err("--model %s: cannot be read: %s", name_or_path, dl_read_error());
        return DL_ERR_INPUT;
    }
    dl_status_t st = dl_model_parse(text, name_or_path, dtype, m);
    free(text);
    return st;
}
