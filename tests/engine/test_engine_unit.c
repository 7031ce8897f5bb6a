/* engine: the protocol's framing and the profile loader, without processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/engine.h"

static void frames_round_trip(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    double v[3] = {1.5, -2, 1e9};
    assert_int_equal(dl_msg_send2(sv[0], DL_MSG_XC_MAX, v, 16, v + 2, 8), DL_OK);
    assert_int_equal(dl_msg_send(sv[0], DL_MSG_DONE, NULL, 0), DL_OK);
    dl_msg_t m;
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_OK);
    assert_int_equal(m.type, DL_MSG_XC_MAX);
    assert_int_equal(m.len, 24);
    assert_memory_equal(m.data, v, 24);
    dl_msg_free(&m);
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_OK);
    assert_int_equal(m.type, DL_MSG_DONE);
    assert_int_equal(m.len, 0);
    dl_msg_free(&m);
    close(sv[0]); /* the peer is gone: EOF reads as a crash */
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_ERR_CRASH);
    close(sv[1]);
}

static void bad_frames_refused(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    dl_wire_hdr_t h = {0x12345678u, DL_WIRE_VERSION, DL_MSG_DONE, 0};
    assert_int_equal(write(sv[0], &h, sizeof(h)), (ssize_t)sizeof(h));
    dl_msg_t m;
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_ERR_COMM);
    h = (dl_wire_hdr_t){DL_WIRE_MAGIC, DL_WIRE_VERSION + 1, DL_MSG_DONE, 0};
    assert_int_equal(write(sv[0], &h, sizeof(h)), (ssize_t)sizeof(h));
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_ERR_COMM);
    h = (dl_wire_hdr_t){DL_WIRE_MAGIC, DL_WIRE_VERSION, DL_MSG_DONE, DL_WIRE_MAX_LEN + 1};
    assert_int_equal(write(sv[0], &h, sizeof(h)), (ssize_t)sizeof(h));
    assert_int_equal(dl_msg_recv(sv[1], &m), DL_ERR_COMM);
    close(sv[0]);
    close(sv[1]);
}

static dl_status_t load_text(const char *text, dl_profile_t *p)
{
    char path[] = "/tmp/dlcomm-profile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    dl_log_set_mute(1);
    dl_status_t st = dl_profile_load_file(path, p);
    dl_log_set_mute(0);
    unlink(path);
    return st;
}

static void profile_loads(void **state)
{
    (void)state;
    dl_profile_t p;
    assert_int_equal(load_text("{\"name\": \"x\", \"description\": \"d\", \"env\": "
                               "{\"NCCL_ALGO\": \"Ring\", \"NCCL_NVLS_ENABLE\": \"0\"}, "
                               "\"intent\": {\"algo\": \"Ring\"}, "
                               "\"applies_when\": {\"min_nodes\": 2}}", &p), DL_OK);
    assert_string_equal(p.name, "x");
    assert_int_equal(p.nenv, 2);
    assert_string_equal(p.env[0], "NCCL_ALGO=Ring");
    assert_int_equal(p.min_nodes, 2);
    char why[128];
    assert_non_null(dl_profile_skip_reason(&p, 1, why, sizeof(why)));
    assert_null(dl_profile_skip_reason(&p, 2, why, sizeof(why)));
    for (int i = 0; i < p.nenv; i++)
        free(p.env[i]);
    free(p.env);
    cJSON_Delete(p.intent);
}

static void profile_refusals(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"name\": \"x\", \"env\": {",                                  /* not JSON */
        "[1, 2]",                                                        /* not an object */
        "{\"env\": {}}",                                                 /* no name */
        "{\"name\": \"x\"}",                                             /* no env */
        "{\"name\": \"a/b\", \"env\": {}}",                              /* bad name */
        "{\"name\": \"x\", \"env\": {\"A\": 1}}",                        /* env not a string */
        "{\"name\": \"x\", \"env\": {}, \"colour\": 1}",                 /* unknown key */
        "{\"name\": \"x\", \"env\": {\"NCCL_NVLS_ENABLE\": \"1\"}}",     /* NVLS on */
        "{\"name\": \"x\", \"env\": {}, \"applies_when\": {\"gpus\": 2}}", /* unknown bound */
        "{\"name\": \"x\", \"env\": {}, \"applies_when\": {\"min_nodes\": 0}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dl_profile_t p;
        if (load_text(bad[i], &p) != DL_ERR_INPUT) {
            print_error("accepted: %s\n", bad[i]);
            fail();
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_round_trip),
        cmocka_unit_test(bad_frames_refused),
        cmocka_unit_test(profile_loads),
        cmocka_unit_test(profile_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
