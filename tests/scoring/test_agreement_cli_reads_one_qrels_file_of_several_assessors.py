"""`python -m scoring agreement --assessor-column all.qrels`: one qrels file of several assessors, the second
column (the iteration, which trec_eval ignores) naming each line's assessor, gives the same rows as one file
per assessor; bad lines are refused with the file and line, exit 2 and nothing on stdout."""

from scoring.lib.cli import main

from .test_agreement_cli_reports_every_coefficient_from_assessors_qrels import FILES, table


def one_file_each(tmp_path):
    out = []
    for name, text in FILES.items():
        path = tmp_path / f"{name}.qrels"
        path.write_text(text)
        out.append(str(path))
    return out


def one_file(tmp_path, order=("ann", "ben", "cat")):
    lines = []
    for name in order:
        for line in FILES[name].splitlines():
            topic, _iteration, doc, grade = line.split()
            lines.append(f"{topic} {name} {doc} {grade}")
    path = tmp_path / "all.qrels"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_one_file_with_the_assessor_column_gives_the_rows_of_one_file_each(tmp_path, capsys):
    separate = table(capsys, ["agreement", *one_file_each(tmp_path), "--per-topic", "--replicates", "200"])
    together = table(
        capsys, ["agreement", "--assessor-column", one_file(tmp_path), "--per-topic", "--replicates", "200"]
    )
    assert together == separate
    assert {tuple(row[1:3]) for row in together[1:]} == {
        ("", ""),
        ("ann", "ben"),
        ("ann", "cat"),
        ("ben", "cat"),
    }


def test_bad_lines_and_a_single_assessor_are_refused(tmp_path, capsys):
    twice = tmp_path / "twice.qrels"
    twice.write_text("1 ann d1 2\n1 ben d1 2\n1 ann d1 3\n")
    assert main(["agreement", "--assessor-column", str(twice)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"{twice}:3: assessor 'ann' grades document 'd1' of topic '1' twice")
    short = tmp_path / "short.qrels"
    short.write_text("1 ann d1 2\n1 ben d1\n")
    assert main(["agreement", "--assessor-column", str(short)]) == 2
    assert capsys.readouterr().err.startswith(f"{short}:2: expected 4 fields")
    alone = tmp_path / "alone.qrels"
    alone.write_text("1 ann d1 2\n1 ann d2 0\n")
    assert main(["agreement", "--assessor-column", str(alone)]) == 2
    assert "names 1 assessor(s)" in capsys.readouterr().err
    assert main(["agreement", "--assessor-column", str(alone), str(short)]) == 2
    assert "reads one qrels file" in capsys.readouterr().err
