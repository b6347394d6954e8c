/**
 * The nesting limit of a request body (SPEC G-4), checked by the guard and the admin API before they
 * parse a body. It lives in formats/json-depth.ts, where the reply side (a whole upstream JSON reply,
 * an upstream stream event, a tool call's arguments) checks the same limit; re-exported here for them.
 */
export { MAX_JSON_DEPTH, nestsDeeperThan } from "../formats/json-depth.ts";
