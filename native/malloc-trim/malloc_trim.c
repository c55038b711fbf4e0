/*
 * A Node-API addon with one function, trim(): glibc's malloc_trim(0), which gives every malloc arena's free pages
 * back to the kernel (madvise MADV_DONTNEED), not only the top of the main heap as free() does. Called by the QUIC
 * thread once a burst of abuse has passed (src/native/malloc-trim.ts, src/ingress/ingress-memory-trim.ts): glibc
 * otherwise keeps a per-thread arena at its high-water mark for the process's life.
 *
 * The few Node-API declarations it uses are written out below instead of including node_api.h, so that the build
 * needs only a C compiler and glibc's headers, not Node's; Node-API's ABI is stable across Node versions, so one
 * build serves every Node the project supports. Node finds the module by napi_register_module_v1 (context-aware:
 * worker threads may load it).
 */
#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef int napi_status;
typedef napi_value (*napi_callback)(napi_env env, napi_callback_info info);

extern napi_status napi_create_function(napi_env env, const char *utf8name, size_t length, napi_callback cb, void *data, napi_value *result);
extern napi_status napi_set_named_property(napi_env env, napi_value object, const char *utf8name, napi_value value);
extern napi_status napi_get_boolean(napi_env env, bool value, napi_value *result);

/* trim() -> true when some memory was given back. */
static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result = NULL;
  napi_get_boolean(env, malloc_trim(0) != 0, &result);
  return result;
}

__attribute__((visibility("default"))) napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  napi_value fn = NULL;
  if (napi_create_function(env, "trim", (size_t)-1, trim, NULL, &fn) != 0) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != 0) return NULL;
  return exports;
}
