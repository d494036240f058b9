"""Spark's names for the main container of its pods.

Here rather than in gpulint.shapes, which reads pod template files by them: gpulint.operators,
which builds a SparkApplication's pods, names them too, and the shapes table imports the
builders (a module each side of the other would be an import cycle).
"""

#: The name Spark gives the main container of a role's pods (Constants.scala), by role.
SPARK_CONTAINERS = {"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}
