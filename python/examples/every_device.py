"""Every device of the host on one job: a matrix product split by rows over the devices, the shards moved from the
first device to the others with accel.copy_between_devices (GPU to GPU peer to peer where the GPUs are peers), each
device's share of a column sum added across the devices by an all-reduce, checked against NumPy.

    python every_device.py [--devices all|cpu,cpu|cuda:0,cuda:1]

`all` is every GPU of the host (two CPU devices where there is none, so that the example still has two to use).
Requests on one device run in the order they were sent, and each GEMM is sent right after the copy into its input:
nothing waits on the host between them. Only the all-reduce, whose ranks each answer once every rank has joined, is
waited for, and the results copied back.
"""

import argparse

import numpy as np

import accel


def open_devices(listed):
    devices = accel.DevicePool.open(listed).devices
    if listed == "all" and len(devices) == 1 and devices[0].kind == "cpu":  # no GPU: a second CPU device too
        devices.append(accel.Device.open("cpu"))
    return devices


def run(listed):
    rng = np.random.default_rng(44)
    rows, k, n = 96, 40, 24
    a = rng.standard_normal((rows, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    devices = open_devices(listed)
    try:
        for link in accel.cuda_peer_links():
            print(f"cuda:{link['from']} -> cuda:{link['to']}: peer access {link['peer_access']}")
        first = devices[0]
        whole_a = first.upload(a)
        share = rows // len(devices)
        products = []
        for rank, device in enumerate(devices):
            # Row shard `rank` of A goes from the first device to this one, then this device multiplies it by B.
            shard = device.allocate((share, k), "float32")
            accel.copy_between_devices(whole_a, shard, count=share * k, source_offset=rank * share * k)
            product = device.allocate((share, n), "float32")
            device.gemm(shard, device.upload(b), product)
            products.append(product)
        # Each device's column sum of its product, then one all-reduce: every device ends with the whole sum.
        sums = [device.upload(p.numpy().sum(axis=0)) for device, p in zip(devices, products)]
        comms = accel.collective.init_all(devices)
        for future in [comm.all_reduce(total) for comm, total in zip(comms, sums)]:
            future.result()
        for future in [comm.destroy() for comm in comms]:
            future.result()
        computed = np.concatenate([p.numpy() for p in products])
        totals = [total.numpy() for total in sums]
    finally:
        for device in devices:
            device.close()

    expected = a[:share * len(devices)] @ b
    np.testing.assert_allclose(computed, expected, rtol=1e-4, atol=1e-4)
    for total in totals:
        np.testing.assert_allclose(total, expected.sum(axis=0), rtol=1e-4, atol=1e-3)
    print(f"{len(devices)} devices: row shards copied from the first, multiplied, column sums all-reduced; "
          "all match NumPy")
    return computed, totals


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default="all", help="all, or a list such as cpu,cpu or cuda:0,cuda:1")
    return run(parser.parse_args(argv).devices)


if __name__ == "__main__":
    main()
