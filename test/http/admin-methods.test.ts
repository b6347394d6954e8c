/**
 * allowedMethods (src/http/admin-methods.ts): the methods an admin path takes, from Elysia's route list,
 * for the 405's Allow (newuser15 N10).
 */
import { describe, expect, test } from "bun:test";
import { allowedMethods } from "../../src/http/admin-methods.ts";

const routes = [
  { method: "GET", path: "/admin/api/keys" },
  { method: "POST", path: "/admin/api/keys" },
  { method: "DELETE", path: "/admin/api/keys/:name" },
  { method: "POST", path: "/admin/api/keys/:name/rotate" },
  { method: "ALL", path: "/admin/api/*" },
  { method: "OPTIONS", path: "/admin/api/keys" },
  { method: "GET", path: "/health" },
];

describe("allowedMethods", () => {
  test("a path's methods, GET with HEAD, in the usual order; parameters match one non-empty segment", () => {
    expect(allowedMethods(routes, "/admin/api/", "/admin/api/keys")).toBe("GET, HEAD, POST");
    expect(allowedMethods(routes, "/admin/api/", "/admin/api/keys/")).toBe("GET, HEAD, POST");
    expect(allowedMethods(routes, "/admin/api/", "/admin/api/keys/ci")).toBe("DELETE");
    expect(allowedMethods(routes, "/admin/api/", "/admin/api/keys/ci/rotate")).toBe("POST");
  });

  test("no route of the prefix serves it: undefined (a 404); wildcards and OPTIONS do not count", () => {
    expect(allowedMethods(routes, "/admin/api/", "/admin/api/keys/ci/other")).toBeUndefined();
    expect(allowedMethods(routes, "/admin/api/", "/admin/api/anything")).toBeUndefined();
    expect(allowedMethods(routes, "/admin/api/", "/health")).toBeUndefined();
    expect(allowedMethods(routes, "/admin/api/", "/admin/api/keys//rotate")).toBeUndefined();
  });
});
