"""One MultiWorkerMirrored worker reading one epoch of a data: files dataset through tfscale's own pipeline and
distribution (tfscale.worker.input), writing the example ids it trained on, one per line, to a file.

Run as: python input_shards.py TF_CONFIG_JSON SPEC_JSON OUT (the spec is a RunSpec's dict; TF_CONFIG names the
cluster and this task)."""

import json
import os
import sys

os.environ["TF_CONFIG"] = sys.argv[1]

import tensorflow as tf  # noqa: E402

from tfscale.suite.spec import RunSpec  # noqa: E402
from tfscale.worker.files import ensure_dataset  # noqa: E402
from tfscale.worker.input import files_pipeline  # noqa: E402
from tfscale.worker.models import build_workload  # noqa: E402


def main() -> None:
    spec = RunSpec.from_dict(json.loads(sys.argv[2]))
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    workload = build_workload(spec)
    dataset = ensure_dataset(
        workload,
        {"zoo": spec.model, "size": spec.model_size},
        spec.data_examples,
        spec.data_shards,
        spec.data_compression,
        spec.seed,
    )
    batch = spec.batch_size

    def one_epoch(context):
        return files_pipeline(dataset, workload, spec, context, batch, epochs=1, with_ids=True)

    ids = []
    for ids_batch, _, _ in strategy.distribute_datasets_from_function(one_epoch):
        ids += [int(i) for local in strategy.experimental_local_results(ids_batch) for i in local.numpy()]
    with open(sys.argv[3], "w") as out:
        out.write("\n".join(map(str, ids)))


main()
