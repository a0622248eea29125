"""accel.copy_between_devices between two CUDA devices from Python, against PyTorch's tensor.to(): cuda:0 and cuda:1
where the machine has two GPUs, else cuda:0 opened twice (two devices, two buffer tables and memory pools on one GPU).
Run on the GPU machine by scripts/gpu-python-check. Skipped without torch, a GPU, or an accel with the CUDA tier."""

import numpy as np
import pytest

import accel

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU for torch", allow_module_level=True)


@pytest.fixture
def pair(cuda):
    """conftest.py's cuda:0 and a second in-process CUDA device (cuda:1 where there is one)."""
    second = torch.cuda.device_count() > 1
    other = accel.Device.open("cuda", ordinal=1 if second else 0)
    yield cuda, other, (1 if second else 0)
    torch.cuda.synchronize()
    other.close()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int8])
@pytest.mark.parametrize("size", [1, 4097, 3 << 20])
def test_a_torch_tensor_copied_to_the_other_gpu_equals_tensor_to(pair, dtype, size):
    first, second, ordinal = pair
    generator = torch.Generator(device="cuda:0").manual_seed(size)
    source = (torch.randn(size, device="cuda:0", generator=generator) * 50).to(dtype)
    torch.cuda.synchronize()
    wrapped = accel.from_dlpack(source, device=first)
    target = second.allocate((size,), wrapped.dtype)
    accel.copy_between_devices(wrapped, target).result()
    moved = torch.from_dlpack(target)
    assert moved.device == torch.device("cuda", ordinal)
    assert torch.equal(moved, source.to(f"cuda:{ordinal}"))


def test_a_range_goes_both_ways_and_bad_ranges_are_refused(pair, rng):
    first, second, _ = pair
    x = rng.standard_normal(1000).astype(np.float32)
    on_first = first.upload(x)
    on_second = second.upload(np.zeros(1000, np.float32))
    accel.copy_between_devices(on_first, on_second, count=300, source_offset=700, destination_offset=5).result()
    back = first.allocate((1000,), "float32")
    accel.copy_between_devices(on_second, back).result()
    expected = np.zeros(1000, np.float32)
    expected[5:305] = x[700:]
    np.testing.assert_array_equal(back.numpy(), expected)
    with pytest.raises(accel.InvalidArgument):
        accel.copy_between_devices(on_first, on_second, destination_offset=1).result()


def test_peer_links_agree_with_torch():
    links = accel.cuda_peer_links()
    count = torch.cuda.device_count()
    assert len(links) == (count * (count - 1) if count > 1 else 0)
    for link in links:
        assert link["peer_access"] == torch.cuda.can_device_access_peer(link["from"], link["to"])
        assert link["link"] in ("nvlink", "same_board", "pcie_switch", "pcie_host_bridge", "numa_node", "system")
        assert (link["nvlinks"] > 0) == (link["link"] == "nvlink")
