/**
 * The URL `calls inspect --bodies` tells the operator to ask another instance at (src/admin/control-routes.ts
 * reachableUrl, review20 R2): an instance publishes its bind address, which on another host is no
 * address to call when it listens on every interface or on loopback behind a proxy.
 */
import { expect, test } from "bun:test";
import { hostname } from "node:os";
import { reachableUrl } from "../../src/admin/control-routes.ts";

test("a bind-all or loopback address on another host becomes that host's name, same scheme and port", () => {
  expect(reachableUrl("http://0.0.0.0:8787", "gw-2.lan:8787")).toBe("http://gw-2.lan:8787");
  expect(reachableUrl("http://[::]:8787", "gw-2:8787")).toBe("http://gw-2:8787");
  expect(reachableUrl("http://127.0.0.1:4000", "gw-3:4000")).toBe("http://gw-3:4000");
  expect(reachableUrl("https://localhost:9443", "edge-1:9443")).toBe("https://edge-1:9443");
});

test("an address that reaches the instance, one on this host, or one without a name: as published", () => {
  expect(reachableUrl("http://10.0.0.7:8787", "gw-2:8787")).toBe("http://10.0.0.7:8787");
  expect(reachableUrl("http://127.0.0.1:8787", `${hostname()}:8787`)).toBe("http://127.0.0.1:8787");
  expect(reachableUrl("http://0.0.0.0:8787", undefined)).toBe("http://0.0.0.0:8787");
  expect(reachableUrl("not a url", "gw-2:1")).toBe("not a url");
});
