#!/usr/bin/python3
"""Reader test for a training results file (`warpsim run --output`): every kind's shapes, units and
columns, /meta, and that the per-sample series add up to the run's totals: NIC tx bytes == NIC rx bytes ==
GPU bytes sent == the report's network bytes per GPU per step x GPUs x steps; GPU busy time == compute
seconds x GPUs x steps; GPU FLOPs == TFLOP/s per GPU x step time x GPUs x steps; storage requests >=
one checkpoint write per GPU; NVSwitch port bytes == NIC NVLink bytes; leaf-to-NIC port bytes == scale-out bytes.

Usage: check_training_file.py FILE.h5 GPUS STEPS
"""
import json
import sys

import h5py
import numpy as np

UNITS = {
    "gpu": {"busy": "fraction", "comm_wait": "fraction", "flops": "FLOP", "hbm_bytes": "bytes",
            "bytes_sent": "bytes"},
    "nic": {"tx_bytes": "bytes", "nvlink_tx_bytes": "bytes", "rx_bytes": "bytes", "queue_depth_max": "bytes",
            "queue_depth_mean": "bytes"},
    "switch_port": {"bytes": "bytes", "queue_depth_max": "bytes", "queue_depth_mean": "bytes",
                    "overflows": "packets"},
    "storage": {"read_bytes": "bytes", "write_bytes": "bytes", "requests": "requests",
                "queued_requests": "requests", "queue_depth_max": "bytes"},
}
COLUMNS = {"gpu": {"node", "local_rank", "leaf", "lp"}, "nic": {"node", "rail", "leaf", "lp"},
           "switch_port": {"switch_lp", "tier", "switch_index", "port", "peer_lp", "bandwidth_gbps"},
           "storage": {"target", "lp"}}


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def close(a, b, what, rel=1e-9):
    assert abs(a - b) <= rel * max(abs(a), abs(b), 1.0), f"{what}: {a!r} != {b!r}"


def main():
    path, gpus, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with h5py.File(path, "r") as f:
        meta = f["meta"].attrs
        for key in ("spec", "spec_json", "warpsim_version", "git_revision", "sync", "partition", "seed", "ranks"):
            assert key in meta, f"/meta lacks {key}"
        spec = json.loads(text(meta["spec_json"]))
        assert spec["name"] == text(meta["experiment"]), spec["name"]
        assert 'name: "' + spec["name"] + '"' in text(meta["spec"])
        assert len(text(meta["git_revision"])) > 0

        series = f["series"]
        interval = int(series.attrs["interval_ps"])
        samples = series["time"].shape[0]
        assert samples > 1 and np.array_equal(series["time"][()], np.arange(samples, dtype=np.uint64) * interval)
        counts = {"gpu": gpus, "nic": gpus, "storage": len(f["components/storage/id"])}
        counts["switch_port"] = len(f["components/switch_port/id"])
        for kind, metrics in UNITS.items():
            comps = f["components"][kind]
            assert np.array_equal(comps["id"][()], np.arange(counts[kind])), kind
            assert COLUMNS[kind] <= set(comps.keys()), (kind, set(comps.keys()))
            assert set(series[kind].keys()) == set(metrics), (kind, set(series[kind].keys()))
            for metric, unit in metrics.items():
                ds = series[kind][metric]
                assert ds.shape == (counts[kind], samples), (ds.name, ds.shape)
                assert text(ds.attrs["unit"]) == unit, (ds.name, text(ds.attrs["unit"]))
                assert text(ds.attrs["component_ids"]) == f"/components/{kind}/id"
                assert np.all(np.isfinite(ds[()])) and ds[()].min() >= 0, ds.name

        s = f["summary"]
        value = lambda name: float(s[name][()])  # noqa: E731
        assert text(s["step_seconds"].attrs["unit"]) == "s"
        assert text(s["tflops_per_gpu"].attrs["unit"]) == "TFLOP/s"
        sent = series["gpu/bytes_sent"][()].sum()
        tx = series["nic/tx_bytes"][()].sum()
        rx = series["nic/rx_bytes"][()].sum()
        close(sent, value("network_bytes_per_gpu_per_step") * gpus * steps, "GPU bytes sent vs the report",
              rel=1e-6)
        assert sent == tx == rx, (sent, tx, rx)
        nvlink = series["nic/nvlink_tx_bytes"][()].sum()
        assert 0 < nvlink < tx, (nvlink, tx)
        # Every packet crosses at least one switch: NVSwitch for NVLink traffic, leaf (and spine) otherwise.
        port_bytes = series["switch_port/bytes"][()]
        tier = f["components/switch_port/tier"][()]
        close(port_bytes[tier == 0].sum(), nvlink, "NVSwitch port bytes vs NIC NVLink bytes")
        # Scale-out packets leave the fabric by exactly one leaf port whose peer is a NIC.
        to_nic = np.isin(f["components/switch_port/peer_lp"][()], f["components/nic/lp"][()])
        close(port_bytes[(tier == 1) & to_nic].sum(), tx - nvlink, "leaf-to-NIC port bytes vs scale-out bytes")
        # The spine ports are recorded, and carry nothing: every inter-node flow of this job stays on its rail
        # (the data-parallel rings are NCCL's rail-aligned channels, and each pipeline hop joins GPUs of equal
        # local index), so it turns at its rail's leaf. A cross-rail route would show here.
        assert (tier == 2).sum() > 0, "no spine ports recorded"
        assert port_bytes[tier == 2].sum() == 0, ("spine traffic from a rail-aligned job", port_bytes[tier == 2].sum())

        busy_s = series["gpu/busy"][()].sum() * interval * 1e-12
        close(busy_s, value("compute_seconds") * gpus * steps, "GPU busy time vs compute seconds", rel=1e-6)
        flops = series["gpu/flops"][()].sum()
        close(flops, value("tflops_per_gpu") * 1e12 * value("step_seconds") * gpus * steps,
              "GPU FLOPs vs TFLOP/s x step time", rel=1e-2)  # the report rounds TFLOP/s to 2 decimals
        wait = series["gpu/comm_wait"][()]
        busy = series["gpu/busy"][()]
        assert np.all(busy + wait <= 1 + 1e-9), "busy + waiting exceeds the interval"
        assert wait.sum() > 0
        # The checkpoint: (at least) one write request per job GPU; data loading may add reads.
        assert series["storage/write_bytes"][()].sum() > 0
        assert series["storage/requests"][()].sum() >= gpus * (steps // 2), series["storage/requests"][()].sum()
    print(f"ok {path}: {samples} samples of {interval / 1e6:g} us; {sent:.0f} bytes sent == NIC tx == rx; "
          f"busy {busy_s:.6g} GPU-s; {flops:.4g} FLOP")
    return 0


if __name__ == "__main__":
    sys.exit(main())
