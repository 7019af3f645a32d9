"""iowrap in Airflow: trace a task's command, labelled with the task instance.

Airflow exports AIRFLOW_CTX_DAG_ID, AIRFLOW_CTX_TASK_ID, AIRFLOW_CTX_DAG_RUN_ID,
AIRFLOW_CTX_TRY_NUMBER (and AIRFLOW_CTX_EXECUTION_DATE, ...) into the environment
of a BashOperator's command; iowrap writes them to summary.json's task.airflow.
A KubernetesPodOperator's pod does not get them: pass them in explicitly, as below.
"""
import pendulum
from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from kubernetes.client import models as k8s

IOWRAP = "/opt/iowrap/iowrap"  # the static binary, on a filesystem the workers see
TRACES = "/shared/iowrap-traces"  # one directory per task: TRACES/HOST/KEY/

with DAG(
    dag_id="iowrap_example",
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    schedule=None,
    catchup=False,
) as dag:
    # BashOperator: the command runs in a bash started by the worker, with
    # AIRFLOW_CTX_* in its environment (BashOperator adds them to `env`, or to
    # the worker's environment when `env` is not given).
    count = BashOperator(
        task_id="count_lines",
        bash_command=f"{IOWRAP} --root {TRACES} --label team=genomics -- wc -l /etc/services",
    )

    # KubernetesPodOperator: the pod's environment is what the spec says. The
    # templates below are rendered by Airflow for each task instance; the binary
    # and the trace directory come from volumes (see ../kubernetes/).
    airflow_ctx = {
        "AIRFLOW_CTX_DAG_ID": "{{ dag.dag_id }}",
        "AIRFLOW_CTX_TASK_ID": "{{ task.task_id }}",
        "AIRFLOW_CTX_DAG_RUN_ID": "{{ run_id }}",
        "AIRFLOW_CTX_TRY_NUMBER": "{{ ti.try_number }}",
    }
    checksum = KubernetesPodOperator(
        task_id="checksum",
        name="checksum",
        image="debian:bookworm-slim",
        cmds=[IOWRAP, "--root", "/traces", "--"],
        arguments=["sha256sum", "/etc/os-release"],
        env_vars=airflow_ctx,
        volumes=[
            k8s.V1Volume(
                name="iowrap",
                host_path=k8s.V1HostPathVolumeSource(path="/opt/iowrap"),
            ),
            k8s.V1Volume(
                name="traces",
                persistent_volume_claim=k8s.V1PersistentVolumeClaimVolumeSource(
                    claim_name="iowrap-traces"
                ),
            ),
        ],
        volume_mounts=[
            k8s.V1VolumeMount(name="iowrap", mount_path="/opt/iowrap", read_only=True),
            k8s.V1VolumeMount(name="traces", mount_path="/traces"),
        ],
    )

    count >> checksum
