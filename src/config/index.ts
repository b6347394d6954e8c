/**
 * The configuration module (SPEC 2.3): schema, loading, secrets, built-in providers, hot reload and
 * `check-config`. Import from here.
 */
export * from "./builtins.ts";
export * from "./check.ts";
export * from "./errors.ts";
export * from "./load.ts";
export * from "./schema.ts";
export * from "./secrets.ts";
export * from "./types.ts";
export * from "./watch.ts";
