"""A Terraform profile from an attacker's pull request: nothing outside the tree is read into
a pool, nothing blocks or runs without bound, and a file tfparse cannot parse is an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpulint.errors import GpulintError
from gpulint.profile import load_profiles

pytest.importorskip("tfparse")

SECRET = "CI-TOKEN-9f86d081"
POOL = 'resource "aws_eks_node_group" "gpu" {{\n  node_group_name = {name}\n}}\n'


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A checked tree `repo/` next to a file outside it that holds a secret."""
    (tmp_path / "secret.txt").write_text(SECRET)
    repo = tmp_path / "repo"
    (repo / "infra").mkdir(parents=True)
    return repo


def load_error(repo: Path, path: str = "infra") -> str:
    with pytest.raises(GpulintError) as info:
        load_profiles([path], root=str(repo))
    assert SECRET not in str(info.value)
    return str(info.value)


def pool_names(repo: Path, path: str = "infra") -> list[str]:
    return [pool.name for pool in load_profiles([path], root=str(repo)).pools]


def test_file_of_a_path_out_of_the_tree_is_refused_at_its_line(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text(POOL.format(name='file("../../secret.txt")'))
    assert load_error(tree) == f"infra/main.tf:2: reads '../../secret.txt', outside {tree}"


def test_file_of_a_symlink_out_of_the_tree_is_refused(tree: Path) -> None:
    (tree / "infra" / "name.txt").symlink_to(tree.parent / "secret.txt")
    (tree / "infra" / "main.tf").write_text(POOL.format(name='file("${path.module}/name.txt")'))
    assert load_error(tree) == f"infra/main.tf:2: reads 'name.txt', outside {tree}"


def test_templatefile_whose_template_reads_out_of_the_tree_is_refused(tree: Path) -> None:
    (tree / "infra" / "name.tpl").write_text('${file("../../secret.txt")}')
    call = 'templatefile("${path.module}/name.tpl", {})'
    (tree / "infra" / "main.tf").write_text(POOL.format(name=call))
    assert load_error(tree) == f"infra/name.tpl:1: reads '../../secret.txt', outside {tree}"


def test_file_of_a_computed_path_is_refused_where_the_kernel_cannot_bound_it(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gpulint.profile.sandbox.read_only_to", lambda paths: None)
    variable = 'variable "p" {\n  default = "../../secret.txt"\n}\n'
    (tree / "infra" / "main.tf").write_text(variable + POOL.format(name="file(var.p)"))
    assert load_error(tree) == (
        "infra/main.tf:5: `file(...)` reads a path gpulint cannot check before evaluating it; "
        'write it as a string such as "${path.module}/values.yaml"'
    )


def test_file_of_a_computed_path_is_left_to_the_kernel_where_it_bounds_it(tree: Path) -> None:
    from gpulint.profile.sandbox import read_only_to

    if read_only_to([str(tree)]) is None:
        pytest.skip("no Landlock here: a computed path is refused")
    variable = 'variable "p" {\n  default = "../../secret.txt"\n}\n'
    (tree / "infra" / "main.tf").write_text(variable + POOL.format(name="file(var.p)"))
    # The read fails in the child: the pool keeps its block's name, never the secret.
    assert pool_names(tree) == ["gpu"]


def test_file_inside_the_tree_is_read(tree: Path) -> None:
    (tree / "infra" / "name.txt").write_text("a100")
    (tree / "shared.txt").write_text("h100")
    name = 'file("${path.module}/name.txt")'
    (tree / "infra" / "main.tf").write_text(
        POOL.format(name=name) + POOL.replace('"gpu"', '"b"').format(name='file("../shared.txt")')
    )
    assert sorted(pool_names(tree)) == ["a100", "h100"]


def tf_json(tree: Path, name: str) -> None:
    """A root module of one `.tf.json` node group named by the expression `name` (and an empty
    `main.tf`, which makes the directory a Terraform input)."""
    block = {"resource": {"aws_eks_node_group": {"gpu": {"node_group_name": name}}}}
    (tree / "infra" / "main.tf").write_text("")
    (tree / "infra" / "pools.tf.json").write_text(json.dumps(block))


def test_file_in_a_tf_json_expression_is_checked_as_terraform_decodes_it(tree: Path) -> None:
    tf_json(tree, '${file("../../secret.txt")}')
    # The same with `\u0066ile`, which is `file` once the JSON string is decoded.
    text = (tree / "infra" / "pools.tf.json").read_text().replace("file", "\\u0066ile")
    (tree / "infra" / "pools.tf.json").write_text(text)
    assert load_error(tree) == f"infra/pools.tf.json: reads '../../secret.txt', outside {tree}"


def test_file_inside_the_tree_in_a_tf_json_expression_is_read(tree: Path) -> None:
    (tree / "infra" / "name.txt").write_text("a100")
    tf_json(tree, '${file("${path.module}/name.txt")}')
    assert pool_names(tree) == ["a100"]


def test_a_tf_json_module_that_calls_itself_is_refused(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text("")
    (tree / "infra" / "main.tf.json").write_text('{"module": {"self": {"source": "./"}}}')
    assert load_error(tree) == (
        "infra/main.tf.json: module source './' calls a module that calls this one"
    )


def test_a_tf_file_that_links_out_of_the_tree_is_refused(tree: Path) -> None:
    outside = tree.parent / "other.tf"
    outside.write_text(POOL.format(name='"outside"'))
    (tree / "infra" / "main.tf").symlink_to(outside)
    assert load_error(tree) == f"infra/main.tf: is a symlink to {outside}, outside {tree}"


def test_a_fifo_among_the_tf_files_is_refused_without_being_opened(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text(POOL.format(name='"a"'))
    os.mkfifo(tree / "infra" / "pools.tf")  # nobody writes: opening it would block forever
    # In a child: were the FIFO opened, the test would fail on the timeout, not hang.
    done = subprocess.run(
        [sys.executable, "-m", "gpulint", "profile", "show", "--profile", "infra"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == (
        "gpulint: error: infra/pools.tf: not a regular file "
        "(a device, FIFO or socket is not read)\n"
    )


def test_a_module_that_calls_itself_is_refused_before_tfparse_runs(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text('module "self" {\n  source = "./"\n}\n')
    assert load_error(tree) == (
        "infra/main.tf:2: module source './' calls a module that calls this one"
    )


def test_modules_that_call_each_other_are_refused(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text('module "a" {\n  source = "./a"\n}\n')
    (tree / "infra" / "a").mkdir()
    (tree / "infra" / "a" / "main.tf").write_text('module "back" {\n  source = "../"\n}\n')
    assert load_error(tree) == (
        "infra/a/main.tf:2: module source '../' calls a module that calls this one"
    )


def test_a_module_source_out_of_the_tree_is_refused(tree: Path) -> None:
    (tree.parent / "mod").mkdir()
    (tree.parent / "mod" / "main.tf").write_text(POOL.format(name='"outside"'))
    (tree / "infra" / "main.tf").write_text('module "m" {\n  source = "../../mod"\n}\n')
    assert load_error(tree) == f"infra/main.tf:2: module source '../../mod' is outside {tree}"


def test_a_module_manifest_pointing_out_of_the_tree_is_refused(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text('module "m" {\n  source = "example/m/aws"\n}\n')
    manifest = tree / "infra" / ".terraform" / "modules" / "modules.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"Modules": [{"Key": "m", "Source": "x", "Dir": "../../../../mod"}]}')
    assert load_error(tree) == (
        "infra/.terraform/modules/modules.json: module directory '../../../../mod' is outside "
        "the tree"
    )


def test_a_count_above_the_bound_is_refused_before_tfparse_runs(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text(
        'resource "aws_eks_node_group" "g" {\n  count = 10000\n}\n'
    )
    assert load_error(tree) == "infra/main.tf:2: count 10000 is above 1000"


def test_an_evaluation_past_the_time_limit_is_an_error(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thousand node groups take tfparse about a second; the limit is cut to a tenth of that.
    monkeypatch.setattr("gpulint.profile.terraform_tree.TIME_LIMIT", 0.1)
    (tree / "infra" / "main.tf").write_text(
        'resource "aws_eks_node_group" "g" {\n  count = 1000\n'
        '  node_group_name = "g${count.index}"\n}\n'
    )
    assert load_error(tree) == (
        "infra: Terraform took more than 0.1 s to evaluate (a `count` or `for_each` too large?)"
    )


def test_malformed_hcl_is_an_error_naming_the_file_and_line(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text('resource "aws_eks_node_group" "g" {\n')
    assert load_error(tree) == (
        "infra/main.tf:1: Terraform could not be parsed: Unclosed configuration block"
    )


def test_random_bytes_are_an_error_and_exit_2(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_bytes(bytes(range(256)) * 4)
    done = subprocess.run(
        [sys.executable, "-m", "gpulint", "profile", "show", "--profile", "infra"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("gpulint: error: infra/main.tf:1: Terraform could not be parsed")
    assert "No node pools" not in done.stderr


def test_malformed_hcl_in_a_called_module_is_an_error_naming_it(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text('module "g" {\n  source = "./gpu"\n}\n')
    (tree / "infra" / "gpu").mkdir()
    (tree / "infra" / "gpu" / "main.tf").write_text('resource "aws_eks_node_group" "g" {\n')
    assert load_error(tree) == (
        "infra/gpu/main.tf:1: Terraform could not be parsed: Unclosed configuration block"
    )


def test_where_linux_bounds_it_the_child_reads_nothing_outside_the_tree(tree: Path) -> None:
    # The text checks stand aside: a call they missed fails in the child instead of reading.
    from gpulint.profile.sandbox import read_only_to
    from gpulint.profile.terraform_tree import evaluate

    if read_only_to([str(tree)]) is None:
        pytest.skip("no Landlock here: the text checks alone stand")
    (tree / "infra" / "main.tf").write_text(POOL.format(name='file("../../secret.txt")'))
    inside = evaluate(str(tree / "infra"), "infra", str, [], read_only_to([str(tree)]))
    assert [b.get("node_group_name") for b in inside["aws_eks_node_group"]] == [None]
    # The same module, bounded by a directory holding the secret, reads it: the bound works.
    bound = read_only_to([str(tree.parent)])
    outside = evaluate(str(tree / "infra"), "infra", str, [], bound)
    assert [b.get("node_group_name") for b in outside["aws_eks_node_group"]] == [SECRET]


def test_a_block_declared_twice_in_one_module_is_refused(tree: Path) -> None:
    # Two patterns' files side by side, each calling `module "eks"`: Terraform refuses the
    # module ("Duplicate module call"); tfparse merged the two calls into one set of pools.
    call = 'module "eks" {{\n  source = "terraform-aws-modules/eks/aws"\n  name = "{name}"\n}}\n'
    (tree / "infra" / "a.tf").write_text(call.format(name="a"))
    (tree / "infra" / "b.tf").write_text(
        # Neither a block comment nor a heredoc declares anything.
        '/*\nmodule "eks" {\n*/\nlocals {\n  t = <<EOT\nmodule "eks" {\nEOT\n}\n'
        + call.format(name="b")
    )
    assert load_error(tree) == (
        'infra/b.tf:9: module "eks" is declared twice in one module (first at infra/a.tf:1): '
        "Terraform refuses the module"
    )
    (tree / "infra" / "b.tf").write_text(POOL.format(name='"b"') + POOL.format(name='"c"'))
    assert load_error(tree) == (
        'infra/b.tf:4: resource "aws_eks_node_group" "gpu" is declared twice in one module '
        "(first at infra/b.tf:1): Terraform refuses the module"
    )


def test_a_local_module_called_twice_declares_its_blocks_once(tree: Path) -> None:
    (tree / "infra" / "main.tf").write_text(
        'module "a" {\n  source = "./pool"\n}\nmodule "b" {\n  source = "./pool"\n}\n'
    )
    (tree / "infra" / "pool").mkdir()
    (tree / "infra" / "pool" / "main.tf").write_text(POOL.format(name='"g"'))
    assert pool_names(tree) == ["g"]  # read, not refused (pools are joined by name)
