/*
 * A Node-API addon with one function, trim(): a Promise of glibc's malloc_trim(0) run on libuv's thread pool, which
 * gives every malloc arena's free pages back to the kernel (madvise MADV_DONTNEED), not only the top of each heap as
 * free() does. Off the calling thread because it walks every arena: 0.2-0.8 s on the loaded 2-core box, measured,
 * which the QUIC thread must not spend (src/ingress/ingress-memory-trim.ts calls it once a burst of abuse has passed).
 *
 * The few Node-API declarations it uses are written out below instead of including node_api.h, so that the build
 * needs only a C compiler and glibc's headers, not Node's (scripts/malloc-trim-build.ts); Node-API's ABI is stable
 * across Node versions, so one build serves every Node the project supports. Node finds the module by
 * napi_register_module_v1, which makes it context-aware: worker threads may load it.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef struct napi_async_work__ *napi_async_work;
typedef struct napi_deferred__ *napi_deferred;
typedef int napi_status;
typedef napi_value (*napi_callback)(napi_env env, napi_callback_info info);
typedef void (*napi_async_execute_callback)(napi_env env, void *data);
typedef void (*napi_async_complete_callback)(napi_env env, napi_status status, void *data);

extern napi_status napi_create_function(napi_env env, const char *utf8name, size_t length, napi_callback cb, void *data, napi_value *result);
extern napi_status napi_set_named_property(napi_env env, napi_value object, const char *utf8name, napi_value value);
extern napi_status napi_get_boolean(napi_env env, bool value, napi_value *result);
extern napi_status napi_create_string_utf8(napi_env env, const char *str, size_t length, napi_value *result);
extern napi_status napi_create_promise(napi_env env, napi_deferred *deferred, napi_value *promise);
extern napi_status napi_resolve_deferred(napi_env env, napi_deferred deferred, napi_value resolution);
extern napi_status napi_create_async_work(napi_env env, napi_value async_resource, napi_value async_resource_name, napi_async_execute_callback execute, napi_async_complete_callback complete, void *data, napi_async_work *result);
extern napi_status napi_queue_async_work(napi_env env, napi_async_work work);
extern napi_status napi_delete_async_work(napi_env env, napi_async_work work);

struct job {
  napi_async_work work;
  napi_deferred deferred;
  int released;
};

/* On a thread-pool thread: no Node-API call here. */
static void execute(napi_env env, void *data) {
  (void)env;
  struct job *j = data;
  j->released = malloc_trim(0);
}

/* Back on the calling thread: resolves with whether some memory was given back. */
static void complete(napi_env env, napi_status status, void *data) {
  struct job *j = data;
  napi_value result = NULL;
  napi_get_boolean(env, status == 0 && j->released != 0, &result);
  napi_resolve_deferred(env, j->deferred, result);
  napi_delete_async_work(env, j->work);
  free(j);
}

/* trim() -> Promise<boolean>: true when some memory was given back. */
static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value promise = NULL;
  napi_value name = NULL;
  struct job *j = calloc(1, sizeof *j);
  if (j == NULL) return NULL;
  if (napi_create_promise(env, &j->deferred, &promise) != 0 || napi_create_string_utf8(env, "malloc_trim", (size_t)-1, &name) != 0 ||
      napi_create_async_work(env, NULL, name, execute, complete, j, &j->work) != 0 || napi_queue_async_work(env, j->work) != 0) {
    free(j);
    return NULL;
  }
  return promise;
}

__attribute__((visibility("default"))) napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  napi_value fn = NULL;
  if (napi_create_function(env, "trim", (size_t)-1, trim, NULL, &fn) != 0) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != 0) return NULL;
  return exports;
}
