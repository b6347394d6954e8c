/**
 * Types of prom-client's per-class modules. src/metrics.ts imports the classes it uses from them
 * instead of the package index, which also loads the default process metrics, the push gateway,
 * the cluster aggregator and @opentelemetry/api (~10 MB of memory in a fresh process, measured).
 */
declare module "prom-client/lib/registry" {
  import type { Registry } from "prom-client";
  const RegistryClass: typeof Registry;
  export default RegistryClass;
}
declare module "prom-client/lib/counter" {
  import type { Counter } from "prom-client";
  const CounterClass: typeof Counter;
  export default CounterClass;
}
declare module "prom-client/lib/gauge" {
  import type { Gauge } from "prom-client";
  const GaugeClass: typeof Gauge;
  export default GaugeClass;
}
