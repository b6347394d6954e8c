/**
 * A key's State on the Keys page: revoked, disabled, its budget used up, or active; shared with
 * `switchyard keys list` since 2026-12-07, so it lives in src/limits/key-state.ts (see there).
 */
export { keyState, type KeyState, type KeyStateInput } from "../../limits/key-state.ts";
