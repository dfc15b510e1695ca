"""PNG figures (matplotlib, Agg backend) from a results dict."""
from __future__ import annotations

from pathlib import Path


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw(results: dict, out_dir: Path) -> list[str]:
    """Draw what the results hold; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    ref = results.get("reference")
    if ref and ref.get("scans"):
        written.append(_scans(ref, out_dir / "bench-reference-scans.png"))
    if ref and ref.get("ratios"):
        written.append(_ratios(ref, out_dir / "bench-reference-ratios.png"))
    sc = results.get("scaling")
    if sc:
        for study, xlabel in (("rows", "rows (millions)"), ("delete_fraction", "deleted rows (%)"),
                              ("delete_deltas", "delete deltas"), ("partitions", "partitions")):
            if sc.get(study):
                written.append(_scaling(sc[study], study, xlabel, out_dir / f"bench-scaling-{study}.png"))
    return [str(w) for w in written if w]


def _median(rec: dict | None):
    return rec.get("median_s") if isinstance(rec, dict) else None


def _scans(ref: dict, path: Path) -> Path:
    plt = _plt()
    scans = ref["scans"]
    groups = [("count()", "hiveacid_count", "orc_raw_count", "antijoin_count"),
              ("count(), hiveacid option columns=id", "hiveacid_count_columns", "orc_raw_count",
               "antijoin_count"),
              ("aggregate over all columns", "hiveacid_agg", "orc_raw_agg", "antijoin_agg")]
    labels = ["hiveacid (correct)", f"Spark ORC raw, impl={ref.get('orc_impl')} (wrong: ignores deletes)",
              "Spark ORC + left-anti join (correct)"]
    colors = ["#1f77b4", "#bbbbbb", "#ff7f0e"]
    fig, ax = plt.subplots(figsize=(9.5, 4.2))
    width = 0.26
    for gi, (title, *names) in enumerate(groups):
        for k, name in enumerate(names):
            v = _median(scans.get(name))
            if v is None:
                continue
            x = gi + (k - 1) * width
            ax.bar(x, v, width, color=colors[k], label=labels[k] if gi == 0 else None)
            ax.text(x, v, f"{v:.1f}s", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(groups)), [g[0] for g in groups])
    ax.set_ylabel("seconds (median)")
    p = ref.get("params", {})
    ax.set_title(f"{p.get('rows', 0) / 1e6:g}M rows, {p.get('delete_fraction', 0) * 100:g}% deleted, "
                 f"{p.get('insert_deltas')} insert + {p.get('delete_deltas')} delete deltas, local[2]")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _ratios(ref: dict, path: Path) -> Path:
    plt = _plt()
    rows = [r for r in ref["ratios"] if r.get("value") is not None and r.get("target") is not None]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
    for i, r in enumerate(rows):
        ok = r.get("ok")
        color = "#2ca02c" if ok else ("#d62728" if ok is False else "#7f7f7f")
        # normalise so the target sits at 1: "<=" targets value/target, ">=" target/value
        norm = r["value"] / r["target"] if r["op"] == "<=" else r["target"] / max(r["value"], 1e-9)
        ax.barh(i, norm, color=color)
        ax.text(norm, i, f"  {r['value']:.3g} ({r['op']} {r['target']:g})", va="center", fontsize=8)
    ax.axvline(1.0, color="black", lw=1, ls="--")
    ax.set_yticks(range(len(rows)), [r["name"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("measured / target (left of the dashed line meets the target)")
    ax.set_xlim(0, max(1.6, max((r["value"] / r["target"] if r["op"] == "<=" else
                                 r["target"] / max(r["value"], 1e-9)) for r in rows) * 1.35))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _scaling(points: list[dict], study: str, xlabel: str, path: Path) -> Path:
    plt = _plt()
    xs = []
    series = {"hiveacid_agg": [], "hiveacid_count": [], "orc_raw_agg": [], "antijoin_agg": []}
    for p in points:
        x = p["x"] * 100 if study == "delete_fraction" else (p["x"] / 1e6 if study == "rows" else p["x"])
        xs.append(x)
        for k in series:
            series[k].append(_median(p["scans"].get(k)))
    fig, ax = plt.subplots(figsize=(6.5, 4))
    styles = {"hiveacid_agg": ("hiveacid aggregate", "-o", "#1f77b4"),
              "hiveacid_count": ("hiveacid count()", "--o", "#1f77b4"),
              "orc_raw_agg": ("Spark ORC raw aggregate (ignores deletes)", "-s", "#999999"),
              "antijoin_agg": ("Spark ORC + anti-join aggregate", "-^", "#ff7f0e")}
    for k, ys in series.items():
        pts = [(x, y) for x, y in zip(xs, ys) if y is not None]
        if pts:
            label, style, color = styles[k]
            ax.plot([a for a, _ in pts], [b for _, b in pts], style, color=color, label=label)
    if study == "partitions":
        plan = [(x, p.get("plan_s")) for x, p in zip(xs, points) if p.get("plan_s") is not None]
        if plan:
            ax.plot([a for a, _ in plan], [b for _, b in plan], ":d", color="#2ca02c",
                    label="hiveacid planning in-process (list + plan)")
    if study in ("delete_deltas", "partitions", "rows"):
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("seconds (median)")
    ax.set_title(f"scaling: {study.replace('_', ' ')}")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
