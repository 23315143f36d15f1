#!/usr/bin/env python3
"""Writes bench/RESULTS.md and bench/results.png from `name value` lines (bench/run.sh all).

Usage: bench/report.py FIGURES_FILE [OUT_DIR]
       bench/report.py --fuzz FIGURES_FILE [OUT_DIR]   (bench/run.sh fuzz: only RESULTS.md's "Fuzzing" section)
The chart needs matplotlib (bench/run.sh installs it from PyPI into a venv under ~/.cache); without it only
RESULTS.md is written.
"""
import datetime
import os
import platform
import sys

# figure: (target text, test on the value (and, with a second parameter, every figure), what the figure is)
TARGETS = {
    "rewrite_10k_ms": ("< 2", lambda v: v < 2, "parse + rewrite + serialize, 10k-segment playlist"),
    "rewrite_vs_python_m3u8": (">= 50", lambda v: v >= 50, "Python m3u8's time for the same rewrite / ours"),
    "views_render_10k_vs_plain": (
        "<= 2", lambda v: v <= 2, "10k-segment live playlist rendered with hlscache.window=60 / without"),
    "dash_rewrite_vs_lxml": ("<= 0.5", lambda v: v <= 0.5, "MPD parse + rewrite + serialize (18k URLs) / lxml"),
    "origin_vs_curl_cli": (">= 0.9", lambda v: v >= 0.9, "origin client throughput / curl --parallel"),
    "cache_open_100k_ms": ("< 1000", lambda v: v < 1000, "open a cache of 100k entries (saved index)"),
    "singleflight_origin_fetches": ("= 1", lambda v: v == 1, "origin fetches for 100 concurrent cold requests"),
    "serve_vs_nginx_static": (">= 0.95", lambda v: v >= 0.95, "cached 2 MiB hit rps / nginx static"),
    "serve_vs_nginx_proxy_cache": (">= 1.0", lambda v: v >= 1.0, "cached 2 MiB hit rps / nginx proxy_cache"),
    "serve_vs_varnish": (">= 1.0", lambda v: v >= 1.0, "cached 2 MiB hit rps / Varnish"),
    "serve_100kib_vs_nginx_static": (">= 0.8", lambda v: v >= 0.8, "cached 100 KiB hit rps / nginx static"),
    "serve_playlist_vod10k_vs_nginx_static": (">= 0.5", lambda v: v >= 0.5, "rewritten 10k playlist / nginx"),
    "serve_playlist_live20_vs_nginx_static": (">= 0.8", lambda v: v >= 0.8, "rewritten live playlist / nginx"),
    "serve_100kib_vs_varnish": (">= 1.0", lambda v: v >= 1.0, "cached 100 KiB hit rps / Varnish's hit"),
    "serve_100kib_cmcd_vs_plain": (
        ">= 0.97", lambda v: v >= 0.97, "cached 100 KiB hit rps with an hls.js CMCD query / the same without"),
    "serve_playlist_live20_vs_varnish": (">= 1.0", lambda v: v >= 1.0, "rewritten live playlist / Varnish's hit of the same bytes"),
    "serve_logged_vs_quiet_2mib": (">= 0.9", lambda v: v >= 0.9, "2 MiB: (defaults vs nginx with access log) / (quiet vs quiet)"),
    "serve_logged_vs_quiet_100kib": (">= 0.9", lambda v: v >= 0.9, "100 KiB: (defaults vs nginx with access log) / (quiet vs quiet)"),
    "serve_logged_vs_quiet_playlist_live20": (">= 0.9", lambda v: v >= 0.9, "live playlist: (defaults vs nginx with access log) / (quiet vs quiet)"),
    "cold_ttfb_overhead_ms": ("<= 0.5", lambda v: v <= 0.5, "cold miss TTFB minus the origin's (cold_ttfb_overhead_bound_ms: the same with --cpu-affinity auto, same rounds)"),
    "rss_mb_500_streams": ("< 104.9", lambda v: v < 104.9, "peak RSS MB, 500 clients on 20 MiB segments"),
    "live100_origin_fetches_per_segment": ("= 1.00", lambda v: v <= 1.0, "100 live players: origin fetches per segment"),
    "live100_playlist_fetches_per_half_td": ("<= 1", lambda v: v <= 1.0, "100 live players: playlist fetches per TD/2"),
    "llhls_fanout_origin_requests": ("= 1", lambda v: v == 1, "1,000 clients blocked on one `_HLS_msn`/`_HLS_part`: origin requests"),
    "llhls_fanout_last_ms": ("<= 20", lambda v: v <= 20, "LL-HLS fan-out: last of 1,000 native clients done after the origin's answer, ms (their floor: llhls_fanout_client_floor_ms; Python clients: llhls_fanout_python_last_ms)"),
    "fleet_origin_fetches_per_object": ("= 1.00", lambda v: v <= 1.0, "3 nodes + nginx, 20 live players: origin fetches per object"),
    "fleet_playlist_fetches_per_half_td": ("<= 1", lambda v: v <= 1.0, "3 nodes + nginx, 20 live players: playlist fetches per TD/2"),
    "fleet_vs_single_2mib": (">= 0.5", lambda v: v >= 0.5, "cached 2 MiB hit rps through nginx to 3 nodes / the owner node alone"),
    "fleet_vs_lb_over_nginx_static_2mib": (">= 0.9", lambda v: v >= 0.9, "the same through nginx to 3 nodes / through the same nginx to nginx static"),
    "prefetch_vs_ytdlp": ("<= 1.0", lambda v: v <= 1.0, "prefetch seconds / yt-dlp seconds"),
    "prefetch_vs_ffmpeg": ("<= 1.0", lambda v: v <= 1.0, "prefetch seconds / ffmpeg -c copy seconds"),
    "https_2mib_vs_nginx_https": (">= 0.9", lambda v: v >= 0.9, "cached 2 MiB hit rps over HTTPS (TLS 1.3) / nginx over HTTPS"),
    "h2_100kib_vs_nginx_h2": (">= 0.9", lambda v: v >= 0.9, "cached 100 KiB hit rps over h2 (64 clients x 10 streams) / nginx h2"),
    "h2_playlist_live20_vs_nginx_h2": (">= 0.8", lambda v: v >= 0.8, "rewritten live playlist over h2 / nginx h2 static"),
    "tls_cold_ttfb_overhead_ms": ("<= cleartext + 0.5", lambda v, f: v <= f.get("cleartext_cold_ttfb_overhead_ms", 0) + 0.5, "cold miss TTFB on a kept HTTPS connection minus the origin's (cleartext_cold_ttfb_overhead_ms: the same in cleartext, same rounds)"),
    "llhls_h2_fanout_origin_requests": ("= 1", lambda v: v == 1, "1,000 blocking reloads on one h2 connection: origin requests"),
    "llhls_h2_fanout_last_ms": ("<= 25", lambda v: v <= 25, "the same: last stream done after the origin's answer, ms (h2load; median of five fan-outs, llhls_h2_fanout_last_ms_min/_max their spread)"),
    "rss_mb_500_tls_idle": ("< 150", lambda v: v < 150, "RSS MB with 500 idle TLS connections"),
    "rss_mb_500_h2_streams": ("< 150", lambda v: v < 150, "peak RSS MB, 500 h2 streams of a 20 MiB segment"),
    "abandoned_alive": ("= 1", lambda v: v == 1, "12,000 abandoned slow misses in 60 s: the server lives"),
    "abandoned_healthz_max_ms": ("< 1000", lambda v: v < 1000, "the same: the slowest /healthz meanwhile, ms"),
    "abandoned_fds_max": ("< 5000", lambda v: v < 5000, "the same: the most descriptors the server held"),
}


def read(path):
    figures = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                try:
                    figures[parts[0]] = float(parts[1])
                except ValueError:
                    pass
    return figures


def machine():
    cpus = os.cpu_count()
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}, {cpus} cores {model}".strip()


def write_markdown(figures, out):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# hlscache benchmark results",
        "",
        f"Written by `bench/run.sh` on {now}; machine: {machine()}. Loopback only; peers started by the script",
        "with the configurations in `bench/peers/`. Ratios compare figures measured in this same run.",
        "",
        "## Targets",
        "",
        "| Figure | Value | Target | Met | What |",
        "|---|---|---|---|---|",
    ]
    for name, (target, ok, what) in TARGETS.items():
        if name in figures:
            value = figures[name]
            met = ok(value) if ok.__code__.co_argcount == 1 else ok(value, figures)
            lines.append(f"| `{name}` | {value:g} | {target} | {'yes' if met else '**no**'} | {what} |")
        else:
            lines.append(f"| `{name}` | not measured | {target} | - | {what} |")
    lines += ["", "## Every figure", "", "| Figure | Value |", "|---|---|"]
    for name, value in figures.items():
        lines.append(f"| `{name}` | {value:g} |")
    path = os.path.join(out, "RESULTS.md")
    # The fuzzers run apart (bench/run.sh fuzz): their section is kept.
    kept = fuzz_section(path)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n" + (("\n" + kept) if kept else ""))


FUZZ_HEADING = "## Fuzzing"


def fuzz_section(path):
    """The "Fuzzing" section of an existing RESULTS.md, heading included, or ""."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return ""
    start = text.find(FUZZ_HEADING)
    return text[start:] if start >= 0 else ""


def write_fuzz(figures, out):
    """Replaces RESULTS.md's "Fuzzing" section with this run's figures, leaving the rest as it is."""
    path = os.path.join(out, "RESULTS.md")
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        text = "# hlscache benchmark results\n"
    start = text.find(FUZZ_HEADING)
    if start >= 0:
        text = text[:start]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sanitizers = "with AddressSanitizer" if figures.get("fuzz_asan", 1) else "without AddressSanitizer (fuzzer only)"
    lines = [
        FUZZ_HEADING,
        "",
        f"Written by `bench/run.sh fuzz` on {now}; machine: {machine()}. libFuzzer {sanitizers}, one",
        "process per harness over the harness's seeds (bench/fuzz.sh); coverage is libFuzzer's covered edges, functions",
        "are hlscache's own functions covered.",
        "",
        "| Figure | Value | Target | Met |",
        "|---|---|---|---|",
    ]
    for name, value in figures.items():
        if name.endswith("_execs"):
            target, ok = ">= 10000000", value >= 10_000_000
        elif name.endswith("_crashes"):
            target, ok = "= 0", value == 0
        else:
            target, ok = "", None
        met = "-" if ok is None else ("yes" if ok else "**no**")
        shown = f"{value:.0f}" if value == int(value) else f"{value:g}"
        lines.append(f"| `{name}` | {shown} | {target} | {met} |")
    with open(path, "w") as f:
        f.write(text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n")


def write_chart(figures, out):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: matplotlib is not installed; no results.png", file=sys.stderr)
        return
    # Ratios against peers, as "times the peer's speed": higher is better for every bar.
    bars = []
    for name, (target, ok, what) in TARGETS.items():
        if name not in figures or not ("_vs_" in name):
            continue
        value = figures[name]
        goal = float(target.split()[-1])
        if target.startswith("<="):  # seconds ratios: lower is better, show the inverse
            value, goal = 1 / value if value else 0, 1 / goal
        label = name.replace("serve_vs_", "2 MiB hit vs ").replace("serve_", "").replace("_vs_", " vs ")
        bars.append((label.replace("_", " "), value, goal, ok(figures[name])))
    if not bars:
        return
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(bars) + 1.5))
    names = [b[0] for b in bars]
    ax.barh(names, [b[1] for b in bars], color=["#2a9d8f" if b[3] else "#e76f51" for b in bars])
    for i, b in enumerate(bars):
        ax.plot([b[2], b[2]], [i - 0.4, i + 0.4], color="black", linewidth=2)
        ax.text(b[1], i, f" {b[1]:.2f}", va="center")
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.invert_yaxis()
    ax.set_xlabel("hlscache's speed relative to the peer (higher is better; black tick: target)")
    ax.set_title("hlscache vs peers, one run on this machine (green: target met, red: missed)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "results.png"), dpi=100)


def main():
    if sys.argv[1] == "--fuzz":
        figures = read(sys.argv[2])
        write_fuzz(figures, sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(os.path.abspath(__file__)))
        return
    figures = read(sys.argv[1])
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    write_markdown(figures, out)
    write_chart(figures, out)


if __name__ == "__main__":
    main()
