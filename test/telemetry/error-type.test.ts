/**
 * The `error.type` of a failed request's span (src/telemetry/otel.ts errorType; OpenTelemetry's general
 * and GenAI conventions: a class of the error, or an HTTP status code for an HTTP failure). A stream cut
 * mid-reply had "200", the status its reply began with (a new-user tryout).
 */
import { expect, test } from "bun:test";
import { errorType } from "../../src/telemetry/otel.ts";

test("an HTTP failure is its status; a reply that began and then broke is its in-band error's code, else the outcome; a client that left is client_closed", () => {
  expect(errorType(502, "error", undefined)).toBe("502");
  expect(errorType(429, "rejected", undefined)).toBe("429");
  expect(errorType(200, "upstream_error", "upstream_connection_lost")).toBe("upstream_connection_lost");
  expect(errorType(200, "upstream_error", undefined)).toBe("upstream_error");
  expect(errorType(200, "error", "gateway_stopping")).toBe("gateway_stopping");
  // a client gone before the reply (recorded 499, which nobody was answered with) or during it (200)
  expect(errorType(499, "client_closed", undefined)).toBe("client_closed");
  expect(errorType(200, "client_closed", undefined)).toBe("client_closed");
  expect(errorType(undefined, undefined, undefined)).toBe("error");
});
