/**
 * The Effect modules the gateway uses (timeouts and retries of token refreshes and alert deliveries,
 * the semaphores of limited accounts, the alert queue), imported by module rather than through the
 * package index, in one module so that {@link loadEffect} (src/memory/lazy-effect.ts) can load them
 * when first needed. Import it only through that loader.
 */
export * as Duration from "effect/Duration";
export * as Effect from "effect/Effect";
export * as Fiber from "effect/Fiber";
export * as Option from "effect/Option";
export * as Queue from "effect/Queue";
export * as Schedule from "effect/Schedule";
