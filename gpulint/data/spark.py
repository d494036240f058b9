"""The names Apache Spark gives what it builds in Kubernetes."""

#: The name Spark gives the main container of a role's pods, by role (apache/spark
#: resource-managers/kubernetes/core Constants.scala DEFAULT_DRIVER_CONTAINER_NAME,
#: DEFAULT_EXECUTOR_CONTAINER_NAME).
SPARK_CONTAINERS = {"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}
