/*
 * ECDSA key generation and signing through OpenSSL's EC_KEY interface, for @certsmith/native-ec.
 *
 * Why this exists: on Node 20 (OpenSSL 3.0), node:crypto spends most of a fresh P-256 key's cost
 * outside the mathematics (its first export converts the provider key to a legacy EC_KEY); here it
 * does not (see docs/performance.md#the-native-ecdsa-addon). The code uses the OpenSSL linked into
 * the running `node` (its symbols
 * are exported to addons); nothing else is linked.
 *
 * Each environment (main thread, worker thread) gets its own curve groups (instance data). A key
 * is an external holding a `native_key`; `dispose` frees it at once (the private scalar is
 * cleared by EC_KEY_free), and the finalizer frees keys that were never disposed.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <stdlib.h>
#include <string.h>

enum { CURVE_P256, CURVE_P384, CURVE_P521, CURVE_COUNT };
enum { DIGEST_SHA256, DIGEST_SHA384, DIGEST_SHA512, DIGEST_COUNT };

static const int curve_nids[CURVE_COUNT] = { NID_X9_62_prime256v1, NID_secp384r1, NID_secp521r1 };
static const char* const curve_names[CURVE_COUNT] = { "P-256", "P-384", "P-521" };
static const char* const digest_names[DIGEST_COUNT] = { "SHA256", "SHA384", "SHA512" };
static const char* const digest_js_names[DIGEST_COUNT] = { "sha256", "sha384", "sha512" };

/* Largest DER this file writes: a P-521 ECPrivateKey is 223 bytes, an ECDSA-P521 signature 139. */
#define DER_BUFFER_BYTES 512

typedef struct {
  EC_GROUP* groups[CURVE_COUNT];
  EVP_MD* digests[DIGEST_COUNT];
} instance_data;

typedef struct {
  EC_KEY* key;
  int curve;
} native_key;

static void free_instance(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  instance_data* instance = data;
  for (int i = 0; i < CURVE_COUNT; i++) EC_GROUP_free(instance->groups[i]);
  for (int i = 0; i < DIGEST_COUNT; i++) EVP_MD_free(instance->digests[i]);
  free(instance);
}

static void free_key(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  native_key* holder = data;
  EC_KEY_free(holder->key);
  free(holder);
}

/* Throw `message: <OpenSSL reason>` and leave the thread's OpenSSL error queue empty, as node:crypto expects. */
static napi_value throw_openssl(napi_env env, const char* message) {
  char text[256];
  unsigned long code = ERR_peek_last_error();
  if (code != 0) {
    char reason[160];
    ERR_error_string_n(code, reason, sizeof reason);
    snprintf(text, sizeof text, "%s: %s", message, reason);
  } else {
    snprintf(text, sizeof text, "%s", message);
  }
  ERR_clear_error();
  napi_throw_error(env, "ERR_CERTSMITH_NATIVE_EC", text);
  return NULL;
}

static int read_index(napi_env env, napi_value value, int count, int* out) {
  int32_t index;
  if (napi_get_value_int32(env, value, &index) != napi_ok || index < 0 || index >= count) return 0;
  *out = index;
  return 1;
}

/* generateKey(curveIndex) → [key external, SEC 1 DER Buffer] */
static napi_value generate_key(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  instance_data* instance;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, (void**)&instance) != napi_ok) return NULL;
  int curve;
  if (argc < 1 || !read_index(env, argv[0], CURVE_COUNT, &curve)) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "unknown curve");
    return NULL;
  }
  EC_KEY* key = EC_KEY_new();
  if (key == NULL || EC_KEY_set_group(key, instance->groups[curve]) != 1 || EC_KEY_generate_key(key) != 1) {
    EC_KEY_free(key);
    return throw_openssl(env, "EC key generation failed");
  }
  unsigned char der[DER_BUFFER_BYTES];
  unsigned char* cursor = der;
  int length = i2d_ECPrivateKey(key, NULL);
  if (length <= 0 || length > DER_BUFFER_BYTES || i2d_ECPrivateKey(key, &cursor) != length) {
    EC_KEY_free(key);
    OPENSSL_cleanse(der, sizeof der);
    return throw_openssl(env, "EC private key encoding failed");
  }
  native_key* holder = malloc(sizeof *holder);
  if (holder == NULL) {
    EC_KEY_free(key);
    OPENSSL_cleanse(der, sizeof der);
    napi_throw_error(env, "ERR_CERTSMITH_NATIVE_EC", "out of memory");
    return NULL;
  }
  holder->key = key;
  holder->curve = curve;
  napi_value result, external, buffer;
  void* copy;
  napi_status status = napi_create_external(env, holder, free_key, NULL, &external);
  if (status != napi_ok) {
    free_key(env, holder, NULL);
    OPENSSL_cleanse(der, sizeof der);
    return NULL;
  }
  status = napi_create_buffer_copy(env, (size_t)length, der, &copy, &buffer);
  OPENSSL_cleanse(der, sizeof der);
  if (status != napi_ok) return NULL;
  if (napi_create_array_with_length(env, 2, &result) != napi_ok) return NULL;
  napi_set_element(env, result, 0, external);
  napi_set_element(env, result, 1, buffer);
  return result;
}

static native_key* key_of(napi_env env, napi_value value) {
  native_key* holder;
  if (napi_get_value_external(env, value, (void**)&holder) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "not a native EC key");
    return NULL;
  }
  if (holder->key == NULL) {
    napi_throw_error(env, "ERR_CERTSMITH_NATIVE_EC", "the key was disposed");
    return NULL;
  }
  return holder;
}

static int bytes_of(napi_env env, napi_value value, const unsigned char** data, size_t* length) {
  bool is_typed;
  if (napi_is_typedarray(env, value, &is_typed) != napi_ok || !is_typed) return 0;
  napi_typedarray_type type;
  void* base;
  napi_value arraybuffer;
  size_t offset;
  if (napi_get_typedarray_info(env, value, &type, length, &base, &arraybuffer, &offset) != napi_ok || type != napi_uint8_array) return 0;
  *data = base;
  return 1;
}

/* sign(key, digestIndex, data: Uint8Array) → DER ECDSA-Sig-Value Buffer */
static napi_value sign(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  instance_data* instance;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, (void**)&instance) != napi_ok) return NULL;
  if (argc < 3) {
    napi_throw_type_error(env, "ERR_MISSING_ARGS", "sign(key, digest, data)");
    return NULL;
  }
  native_key* holder = key_of(env, argv[0]);
  if (holder == NULL) return NULL;
  int digest;
  if (!read_index(env, argv[1], DIGEST_COUNT, &digest)) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_VALUE", "unknown digest");
    return NULL;
  }
  const unsigned char* data;
  size_t length;
  if (!bytes_of(env, argv[2], &data, &length)) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "data must be a Uint8Array");
    return NULL;
  }
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int hash_length = 0;
  if (EVP_Digest(data, length, hash, &hash_length, instance->digests[digest], NULL) != 1) return throw_openssl(env, "digest failed");
  ECDSA_SIG* signature = ECDSA_do_sign(hash, (int)hash_length, holder->key);
  if (signature == NULL) return throw_openssl(env, "ECDSA signature failed");
  unsigned char der[DER_BUFFER_BYTES];
  unsigned char* cursor = der;
  int der_length = i2d_ECDSA_SIG(signature, NULL);
  if (der_length <= 0 || der_length > DER_BUFFER_BYTES || i2d_ECDSA_SIG(signature, &cursor) != der_length) {
    ECDSA_SIG_free(signature);
    return throw_openssl(env, "ECDSA signature encoding failed");
  }
  ECDSA_SIG_free(signature);
  napi_value buffer;
  void* copy;
  if (napi_create_buffer_copy(env, (size_t)der_length, der, &copy, &buffer) != napi_ok) return NULL;
  return buffer;
}

/* importKey(sec1: Uint8Array) → [key external, curveIndex]: an existing key (a CA's), on one of our curves. */
static napi_value import_key(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  instance_data* instance;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, (void**)&instance) != napi_ok) return NULL;
  const unsigned char* data;
  size_t length;
  if (argc < 1 || !bytes_of(env, argv[0], &data, &length)) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "the key must be SEC 1 DER in a Uint8Array");
    return NULL;
  }
  const unsigned char* cursor = data;
  EC_KEY* key = d2i_ECPrivateKey(NULL, &cursor, (long)length);
  if (key == NULL) return throw_openssl(env, "not a SEC 1 EC private key");
  if (cursor != data + length) {
    EC_KEY_free(key);
    napi_throw_error(env, "ERR_CERTSMITH_NATIVE_EC", "trailing data after the EC private key");
    return NULL;
  }
  int nid = EC_GROUP_get_curve_name(EC_KEY_get0_group(key));
  int curve = -1;
  for (int i = 0; i < CURVE_COUNT; i++) {
    if (curve_nids[i] == nid) curve = i;
  }
  /* A key without its public point cannot be checked; one whose point does not match is refused. */
  if (curve < 0 || EC_KEY_get0_public_key(key) == NULL || EC_KEY_check_key(key) != 1) {
    EC_KEY_free(key);
    ERR_clear_error();
    napi_throw_error(env, "ERR_CERTSMITH_NATIVE_EC", curve < 0 ? "unsupported curve" : "the EC key is not consistent");
    return NULL;
  }
  native_key* holder = malloc(sizeof *holder);
  if (holder == NULL) {
    EC_KEY_free(key);
    napi_throw_error(env, "ERR_CERTSMITH_NATIVE_EC", "out of memory");
    return NULL;
  }
  holder->key = key;
  holder->curve = curve;
  napi_value result, external, index;
  if (napi_create_external(env, holder, free_key, NULL, &external) != napi_ok) {
    free_key(env, holder, NULL);
    return NULL;
  }
  napi_create_int32(env, curve, &index);
  if (napi_create_array_with_length(env, 2, &result) != napi_ok) return NULL;
  napi_set_element(env, result, 0, external);
  napi_set_element(env, result, 1, index);
  return result;
}

/* dispose(key): free the key now (idempotent). */
static napi_value dispose(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  native_key* holder;
  if (argc < 1 || napi_get_value_external(env, argv[0], (void**)&holder) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "not a native EC key");
    return NULL;
  }
  EC_KEY_free(holder->key);
  holder->key = NULL;
  return NULL;
}

static napi_value string_array(napi_env env, const char* const* names, int count) {
  napi_value array, name;
  napi_create_array_with_length(env, (size_t)count, &array);
  for (int i = 0; i < count; i++) {
    napi_create_string_utf8(env, names[i], NAPI_AUTO_LENGTH, &name);
    napi_set_element(env, array, (uint32_t)i, name);
  }
  return array;
}

NAPI_MODULE_INIT() {
  instance_data* instance = calloc(1, sizeof *instance);
  if (instance == NULL) {
    napi_throw_error(env, "ERR_CERTSMITH_NATIVE_EC", "out of memory");
    return NULL;
  }
  for (int i = 0; i < CURVE_COUNT; i++) instance->groups[i] = EC_GROUP_new_by_curve_name(curve_nids[i]);
  for (int i = 0; i < DIGEST_COUNT; i++) instance->digests[i] = EVP_MD_fetch(NULL, digest_names[i], NULL);
  for (int i = 0; i < CURVE_COUNT; i++) {
    if (instance->groups[i] == NULL) {
      free_instance(env, instance, NULL);
      return throw_openssl(env, "OpenSSL has no such curve");
    }
  }
  for (int i = 0; i < DIGEST_COUNT; i++) {
    if (instance->digests[i] == NULL) {
      free_instance(env, instance, NULL);
      return throw_openssl(env, "OpenSSL has no such digest");
    }
  }
  if (napi_set_instance_data(env, instance, free_instance, NULL) != napi_ok) {
    free_instance(env, instance, NULL);
    return NULL;
  }
  napi_property_descriptor properties[] = {
    { "generateKey", NULL, generate_key, NULL, NULL, NULL, napi_enumerable, instance },
    { "importKey", NULL, import_key, NULL, NULL, NULL, napi_enumerable, instance },
    { "sign", NULL, sign, NULL, NULL, NULL, napi_enumerable, instance },
    { "dispose", NULL, dispose, NULL, NULL, NULL, napi_enumerable, instance },
    { "curves", NULL, NULL, NULL, NULL, string_array(env, curve_names, CURVE_COUNT), napi_enumerable, NULL },
    { "digests", NULL, NULL, NULL, NULL, string_array(env, digest_js_names, DIGEST_COUNT), napi_enumerable, NULL },
  };
  napi_value version;
  napi_create_string_utf8(env, OpenSSL_version(OPENSSL_VERSION), NAPI_AUTO_LENGTH, &version);
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  napi_set_named_property(env, exports, "openssl", version);
  return exports;
}
