"""Zero-copy interop with PyTorch on a CUDA device: the same memory in and out, accel's writes seen by torch after the
stream hand-off, and stream ordering both ways by events, without a host synchronisation. Run on the GPU machine by
scripts/gpu-python-check; kept out of python/tests, the CPU suite, where no test may skip. Skipped without torch, a
GPU, or an accel built with the CUDA tier (ACCEL_WITH_CUDA=ON)."""

import numpy as np
import pytest

import accel

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU for torch", allow_module_level=True)

SLEEP_CYCLES = 200_000_000  # about 0.1 s of a GPU's clock: work still running when the other side starts


@pytest.fixture
def cuda(cuda):
    """conftest.py's CUDA device, with torch's work finished before it closes."""
    yield cuda
    torch.cuda.synchronize()


def test_a_torch_tensor_goes_in_and_out_with_the_same_pointer(cuda):
    tensor = torch.arange(1024, dtype=torch.float32, device="cuda")
    buffer = accel.from_dlpack(tensor, device=cuda)
    assert buffer.shape == (1024,) and buffer.dtype == "float32"
    assert buffer.__dlpack_device__() == (2, 0)
    back = torch.from_dlpack(buffer)
    assert back.data_ptr() == tensor.data_ptr()
    assert buffer.__cuda_array_interface__["data"][0] == tensor.data_ptr()
    np.testing.assert_array_equal(buffer.numpy(), np.arange(1024, dtype=np.float32))


def test_an_accel_buffer_goes_to_torch_without_a_copy(cuda):
    buffer = cuda.upload(np.arange(64, dtype=np.float64).reshape(8, 8))
    tensor = torch.from_dlpack(buffer)
    assert tensor.device.type == "cuda" and tensor.shape == (8, 8) and tensor.dtype == torch.float64
    interface = buffer.__cuda_array_interface__
    assert interface["version"] == 3 and interface["typestr"] == "<f8" and interface["stream"] not in (None, 0)
    assert tensor.data_ptr() == interface["data"][0]
    assert torch.as_tensor(buffer, device="cuda").data_ptr() == tensor.data_ptr()  # through the array interface
    assert torch.equal(tensor.cpu(), torch.arange(64, dtype=torch.float64).reshape(8, 8))


def test_torch_sees_an_accel_write_after_the_stream_hand_off(cuda):
    tensor = torch.ones(1 << 20, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    buffer = accel.from_dlpack(tensor, device=cuda)
    cuda.scal(buffer, 3.0)  # not waited for: torch's stream waits for it by an event
    seen = torch.from_dlpack(buffer)  # __dlpack__(stream=torch's current stream)
    assert seen.data_ptr() == tensor.data_ptr()
    assert torch.all(seen == 3.0).item()


def test_accel_reads_what_torch_wrote_on_its_stream_without_a_host_sync(cuda):
    tensor = torch.zeros(1 << 22, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP_CYCLES)  # the write below lands long after accel's request was sent
        tensor.fill_(7.0)
        # torch orders its current stream (side) before accel's stream, which accel.from_dlpack passes as `stream`
        buffer = accel.from_dlpack(tensor, device=cuda)
    copy = cuda.allocate((1 << 22,), "float32")
    cuda.copy(buffer, copy).result()  # accel reads on its own stream
    assert (copy.numpy() == 7.0).all()


def test_torch_reads_what_accel_wrote_on_its_stream(cuda):
    source = cuda.upload(np.full(1 << 22, 5.0, np.float32))
    target = cuda.allocate((1 << 22,), "float32")
    cuda.copy(source, target)  # not waited for
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        seen = torch.from_dlpack(target)  # side waits for accel's copy by an event
        same = torch.all(seen == 5.0)
    assert same.item()


def test_a_cpu_tensor_is_refused_by_a_cuda_device(cuda):
    with pytest.raises(accel.InvalidArgument, match="not on cuda:0"):
        accel.from_dlpack(torch.ones(4), device=cuda)
