from tfscale.worker.main import REASON_CHARS, error_line

KERAS_IN_USER_CODE = """in user code:

    File "/work/tfscale/worker/loop.py", line 51, in train_step  *
        losses = strategy.run(replica_step, args=(x, y))
    ValueError: Exception encountered when calling BatchNormalization.call().

    \x1b[1mYou must specify an aggregation method to update a AggregatingVariable in Replica Context.\x1b[0m

    Arguments received by BatchNormalization.call():
      \u2022 training=True
"""


def test_innermost_error_and_its_explanation():
    assert error_line(ValueError(KERAS_IN_USER_CODE)) == (
        "ValueError: Exception encountered when calling BatchNormalization.call(). "
        "You must specify an aggregation method to update a AggregatingVariable in Replica Context."
    )


def test_plain_errors_use_their_type_and_first_line():
    assert error_line(RuntimeError("boom\nmore detail")) == "RuntimeError: boom"
    assert error_line(KeyError("x")) == "KeyError: 'x'"


def test_long_messages_are_cut():
    text = error_line(ValueError("x" * 1000))
    assert len(text) == REASON_CHARS
    assert text.endswith("...")


def test_out_of_memory_is_named():
    class ResourceExhaustedError(Exception):
        pass

    text = error_line(ResourceExhaustedError("OOM when allocating tensor with shape[1024,1024,1024]"))
    assert text == "out of memory: ResourceExhaustedError: OOM when allocating tensor with shape[1024,1024,1024]"
