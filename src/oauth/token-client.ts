/**
 * The @effect/platform modules token calls use (src/oauth/protocol.ts `tokenCall`), in one module so
 * that `loadTokenClient` can load them on first use, by module rather than through the package index.
 */
export * as FetchHttpClient from "@effect/platform/FetchHttpClient";
export * as HttpClient from "@effect/platform/HttpClient";
export * as HttpClientRequest from "@effect/platform/HttpClientRequest";
