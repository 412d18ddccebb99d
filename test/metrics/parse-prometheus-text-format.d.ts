declare module "parse-prometheus-text-format" {
  /** One family: counters and gauges have `value`s, histograms `buckets`, `count` and `sum`. */
  export interface Family {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: Array<{ labels?: Record<string, string>; value?: string; buckets?: Record<string, string>; count?: string; sum?: string }>;
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
