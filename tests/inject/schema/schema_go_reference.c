/*
 * schema_go_reference.c - the Go type check without its fast path, for
 * test_schema_walk.c to compare with: handlers/inject/wh_inject_schema_go.c
 * compiled with WH_INJECT_SCHEMA_GO_TABLE 0 (every key decided by the
 * generic walk_field and leaf_keeps; the round trip visits every list item)
 * and WH_INJECT_SCHEMA_GO_MEMO 0 (every quantity canonicalised anew), its
 * public functions renamed ref_*.
 */
#define WH_INJECT_SCHEMA_GO_TABLE 0
#define WH_INJECT_SCHEMA_GO_MEMO 0
#define wh_inject_go_decode ref_go_decode
#define wh_inject_go_stable_items ref_go_stable_items
#define wh_inject_go_leaves_free ref_go_leaves_free
#define wh_inject_go_roundtrip ref_go_roundtrip
#define wh_inject_go_roundtrip_beside ref_go_roundtrip_beside
#define wh_inject_go_ordered ref_go_ordered
#define wh_inject_go_decode_molded ref_go_decode_molded
#include "wh_inject_schema_go.c"

/* The round trip's shortcut for quantities already canonical, for the test. */
int ref_quantity_is_canonical(const char *text);
int ref_quantity_is_canonical(const char *text)
{
    return quantity_is_canonical(text);
}
