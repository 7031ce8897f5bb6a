/* Framing of the supervisor <-> worker protocol (see engine.h). */
#include "engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static dl_status_t write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return DL_ERR_CRASH; /* the peer is gone */
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return DL_OK;
}

dl_status_t dl_msg_send2(int fd, uint16_t type, const void *a, uint32_t alen, const void *b,
                         uint32_t blen)
{
    dl_wire_hdr_t h = {DL_WIRE_MAGIC, DL_WIRE_VERSION, type, alen + blen};
    struct iovec iov[3] = {{&h, sizeof(h)}, {(void *)a, alen}, {(void *)b, blen}};
    return write_all(fd, iov, blen ? 3 : alen ? 2 : 1);
}

dl_status_t dl_msg_send(int fd, uint16_t type, const void *data, uint32_t len)
{
    return dl_msg_send2(fd, type, data, len, NULL, 0);
}

static dl_status_t read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return DL_ERR_CRASH;
        p += r;
        len -= (size_t)r;
    }
    return DL_OK;
}

dl_status_t dl_msg_recv(int fd, dl_msg_t *m)
{
    dl_wire_hdr_t h;
    memset(m, 0, sizeof(*m));
    dl_status_t st = read_all(fd, &h, sizeof(h));
    if (st != DL_OK)
        return st;
    if (h.magic != DL_WIRE_MAGIC || h.version != DL_WIRE_VERSION || h.len > DL_WIRE_MAX_LEN) {
        dl_err("worker protocol: bad header (magic %08x, version %u, length %u)", h.magic,
               h.version, h.len);
        return DL_ERR_COMM;
    }
    m->type = h.type;
    m->len = h.len;
    m->data = malloc((size_t)h.len + 1);
    if (!m->data)
        return DL_ERR_NOMEM;
    ((char *)m->data)[h.len] = '\0';
    st = read_all(fd, m->data, h.len);
    if (st != DL_OK)
        dl_msg_free(m);
    return st;
}

void dl_msg_free(dl_msg_t *m)
{
    free(m->data);
    m->data = NULL;
    m->len = 0;
}

dl_status_t dl_config_send(int fd, dl_wire_config_t *w, const dl_backend_ops_t *be,
                           const void *be_opts, const char *profile, const char *run_dir)
{
    snprintf(w->backend, sizeof(w->backend), "%s", be->name);
    snprintf(w->profile, sizeof(w->profile), "%s", profile);
    snprintf(w->run_dir, sizeof(w->run_dir), "%s", run_dir);
    /* The backend's options whole, as their echo: a new option is a row in
     * its table, nothing here. */
    cJSON *o = cJSON_CreateObject();
    if (be_opts)
        dl_opts_echo(be->opts, be->nopts, be_opts, o);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    w->opts_len = text ? (uint32_t)strlen(text) : 0;
    dl_status_t st = dl_msg_send2(fd, DL_MSG_CONFIG, w, sizeof(*w), text ? text : "", w->opts_len);
    free(text);
    return st;
}
