/**
 * Prometheus text exposition (format 0.0.4) of what the process can say about itself without
 * instrumenting the request paths: process and Node.js runtime figures, the readiness checks,
 * and BullMQ job counts by queue and state.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels?: Labels;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: "gauge" | "counter";
  readonly samples: readonly Sample[];
}

const escapeLabel = (v: string): string =>
  v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const escapeHelp = (v: string): string => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

/** Families as the text format: HELP and TYPE lines, then one line per sample. */
export function renderMetrics(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const labels = Object.entries(s.labels ?? {});
      const text =
        labels.length === 0 ? "" : `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`;
      lines.push(`${f.name}${text} ${formatValue(s.value)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** Process and runtime figures (the names prom-client's default metrics use). */
export class ProcessMetrics {
  private readonly loop: ReturnType<typeof monitorEventLoopDelay> = monitorEventLoopDelay({ resolution: 20 });
  private readonly startSeconds = Math.round(Date.now() / 1000 - process.uptime());

  public constructor() {
    this.loop.enable();
  }

  public collect(): Family[] {
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    const families: Family[] = [
      gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.", [
        { value: this.startSeconds },
      ]),
      gauge("process_resident_memory_bytes", "Resident memory size in bytes.", [{ value: mem.rss }]),
      counter("process_cpu_user_seconds_total", "User CPU time spent, in seconds.", [
        { value: cpu.user / 1e6 },
      ]),
      counter("process_cpu_system_seconds_total", "System CPU time spent, in seconds.", [
        { value: cpu.system / 1e6 },
      ]),
      counter("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", [
        { value: (cpu.user + cpu.system) / 1e6 },
      ]),
      gauge("nodejs_heap_size_total_bytes", "V8 heap size in bytes.", [{ value: mem.heapTotal }]),
      gauge("nodejs_heap_size_used_bytes", "V8 heap used in bytes.", [{ value: mem.heapUsed }]),
      gauge("nodejs_external_memory_bytes", "Memory of C++ objects bound to JavaScript, in bytes.", [
        { value: mem.external },
      ]),
      gauge("nodejs_eventloop_lag_p99_seconds", "99th percentile of the event loop delay, in seconds.", [
        { value: this.loop.percentile(99) / 1e9 },
      ]),
      gauge("nodejs_eventloop_lag_max_seconds", "Largest event loop delay, in seconds.", [
        { value: this.loop.max / 1e9 },
      ]),
      gauge("nodejs_version_info", "Node.js version.", [{ labels: { version: process.version }, value: 1 }]),
    ];
    return families;
  }

  public stop(): void {
    this.loop.disable();
  }
}

export function gauge(name: string, help: string, samples: readonly Sample[]): Family {
  return { name, help, type: "gauge", samples };
}

export function counter(name: string, help: string, samples: readonly Sample[]): Family {
  return { name, help, type: "counter", samples };
}
