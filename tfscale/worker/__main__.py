from tfscale.worker.process import run_process

run_process()
