"""One exception class per accel::Code, all accel.Error, with the C++ message."""

import pytest

import accel
from accel import _accel

EXPECTED = {
    "invalid_argument": accel.InvalidArgument, "not_supported": accel.NotSupported,
    "failed_precondition": accel.FailedPrecondition, "resource_exhausted": accel.ResourceExhausted,
    "unavailable": accel.Unavailable, "cancelled": accel.Cancelled, "deadline_exceeded": accel.DeadlineExceeded,
    "stale_handle": accel.StaleHandle, "context_lost": accel.ContextLost, "internal": accel.Internal,
}


def test_every_cpp_code_has_its_class():
    assert list(_accel._status_codes) == list(EXPECTED)


@pytest.mark.parametrize("code", list(EXPECTED))
def test_each_code_raises_its_class_with_the_cpp_text(code):
    with pytest.raises(EXPECTED[code]) as raised:
        _accel._raise_status(code, "what went wrong")
    assert isinstance(raised.value, accel.Error)
    assert str(raised.value) == f"{code}: what went wrong"
    assert raised.value.code == code and raised.value.source == "runtime" and raised.value.raw_code == 0


def test_python_bases_where_they_fit():
    assert issubclass(accel.InvalidArgument, ValueError)
    assert issubclass(accel.DeadlineExceeded, TimeoutError)


def test_bad_device_kind_is_invalid_argument():
    with pytest.raises(accel.InvalidArgument, match=r"Device.open: unknown device 'tpu' \(auto, cpu, cpu-isolated"):
        accel.Device.open("tpu")
    with pytest.raises(accel.InvalidArgument, match="names GPU 4096, but this host has"):
        accel.Device.open("cuda:4096")
    with pytest.raises(accel.InvalidArgument, match="isolation= and ordinal= go with kind 'cpu' or 'cuda'"):
        accel.Device.open("cuda-isolated:0", ordinal=1)


def test_a_device_by_the_name_the_cli_takes():
    device = accel.Device.open("cpu-isolated")
    try:
        assert device.kind == "cpu"
        assert device.isolation == "worker_process"
    finally:
        device.close()
    auto = accel.Device.open("auto")
    auto.close()


def test_no_cuda_here_is_an_accel_error():
    try:
        accel.Device.open("cuda").close()
    except accel.Error:
        return  # the refusal is an accel error, as asked
    pytest.skip("a CUDA device opens on this machine")


def test_a_request_the_cpu_cannot_run_is_not_supported(device):
    a = device.allocate((4, 4), "float16")
    with pytest.raises(accel.NotSupported):
        device.gemm(a=a, b=a, c=a).result()


def test_bad_isolation_is_invalid_argument():
    with pytest.raises(accel.InvalidArgument, match="isolation 'thread' is not one of"):
        accel.Device.open("cpu", isolation="thread")
