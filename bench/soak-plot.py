"""Draws bench/soak's samples (a CSV) as one PNG: database size, RSS, p99 and outbox depth
against time, with the first retention window marked. Usage: soak-plot.py SAMPLES.csv OUT.png WINDOW_S"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

samples, out, window = sys.argv[1], sys.argv[2], float(sys.argv[3])
rows = list(csv.DictReader(open(samples)))
t = [float(r["t_s"]) / 60 for r in rows]
series = [
    ("database on disk (MB)", [float(r["db_kb"]) / 1024 for r in rows]),
    ("RSS (MB)", [float(r["rss_kb"]) / 1024 for r in rows]),
    ("send-link p99 (ms)", [float(r["p99_ms"]) for r in rows]),
    ("outbox unfinished", [float(r["outbox_unfinished"]) for r in rows]),
    ("send-links/s", [float(r["rps"]) for r in rows]),
]
fig, axes = plt.subplots(len(series), 1, figsize=(10, 2.2 * len(series)), sharex=True)
for ax, (label, values) in zip(axes, series):
    ax.plot(t, values, linewidth=1)
    ax.set_ylabel(label, fontsize=8)
    ax.axvline(window / 60, color="grey", linestyle="--", linewidth=0.8)
    # Headroom above the highest sample: a nearly constant series (the paced rate) otherwise
    # sits on the frame's top edge and cannot be seen.
    ax.set_ylim(0, max(max(values, default=0) * 1.1, 1))
    ax.grid(True, linewidth=0.3)
axes[-1].set_xlabel("minutes (dashed: the first retention window has passed)")
fig.suptitle("postern soak: steady send-links with SMTP delivery and housekeeping on")
fig.tight_layout()
fig.savefig(out, dpi=110)
