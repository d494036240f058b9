"""Small manifests the end-to-end tests share."""

REQUEST_ONLY = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
spec:
  containers:
  - name: c
    resources:
      requests: {cpu: "1", nvidia.com/gpu: 1}
"""
BEST_EFFORT = """\
apiVersion: v1
kind: Pod
metadata:
  name: besteffort
spec:
  containers:
  - name: c
    resources:
      limits: {nvidia.com/gpu: 1}
"""
CLEAN = """\
apiVersion: v1
kind: Pod
metadata:
  name: clean
spec:
  containers:
  - name: c
    resources:
      requests: {cpu: "1"}
      limits: {nvidia.com/gpu: 1}
"""
# A quota of 4 GPUs in namespace ml.
GPU_QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu-quota, namespace: ml}
spec:
  hard: {requests.nvidia.com/gpu: "4"}
"""

# A Job selecting a node group that fixtures/infra/terraform/eks does not create (GPU103 at 10:9).
TERRAFORM_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        eks.amazonaws.com/nodegroup: h100-training
      containers:
      - name: train
        image: trainer:1.0
        resources:
          limits: {nvidia.com/gpu: 1}
"""
#: A Deployment of `replicas` pods of 4 GPUs each in namespace ml, tolerating the GPU taint;
#: `selector` adds to its pod spec (a nodeSelector line, or nothing).
GPU_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: ml}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:{selector}
      tolerations:
      - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
      containers:
      - name: serve
        image: serve:1.0
        resources:
          limits: {{nvidia.com/gpu: 4}}
"""
