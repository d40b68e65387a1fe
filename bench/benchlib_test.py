import benchlib


def test_markdown_table_pads_columns_so_it_reads_as_text_too():
    table = benchlib.markdown_table(["candidate", "s"], [["add", "1.5"], ["fuse_gelu", "12.0"]])
    assert table == ("| candidate | s    |\n"
                     "|-----------|------|\n"
                     "| add       | 1.5  |\n"
                     "| fuse_gelu | 12.0 |")


def test_parse_json_lines_keeps_the_rows_around_stray_output():
    text = 'building...\n{"status": "correct"}\n{broken\n\n{"status": "incorrect"}\n'
    assert [r["status"] for r in benchlib.parse_json_lines(text)] == ["correct", "incorrect"]


def test_median_skips_missing_values():
    assert benchlib.median([3, None, 1, 2]) == 2
    assert benchlib.median([4, 1, 3, 2]) == 2.5
    assert benchlib.median([None]) is None


def test_tolerance_is_the_larger_of_absolute_and_relative():
    # 3 us kernel: 1 us absolute dominates; 1 ms kernel: 3 % dominates.
    assert benchlib.within_tolerance(3.9, 3.0, 1.0, 0.03)
    assert not benchlib.within_tolerance(4.1, 3.0, 1.0, 0.03)
    assert benchlib.within_tolerance(1029.0, 1000.0, 1.0, 0.03)
    assert not benchlib.within_tolerance(1031.0, 1000.0, 1.0, 0.03)
    assert not benchlib.within_tolerance(None, 1000.0, 1.0, 0.03)


def test_interval_excludes():
    assert not benchlib.interval_excludes([0.99, 1.01], 1.0)
    assert benchlib.interval_excludes([1.001, 1.02], 1.0)
    assert benchlib.interval_excludes([0.95, 0.999], 1.0)
    assert not benchlib.interval_excludes(None, 1.0)


def test_cells_show_missing_numbers_as_a_dash():
    assert benchlib.fmt(None) == "–"
    assert benchlib.fmt(1.23456, 2, "x") == "1.23x"
    assert benchlib.ratio(5.0, 0) is None


def test_kernelpro_command_lists_every_candidate():
    cmd = benchlib.kernelpro_command("kp", "p.py", ["a.py", "b.py"], cache_dir="/c",
                                     extra=["-j", "2"])
    assert cmd == ["kp", "eval", "--json", "--device", "cuda", "--problem", "p.py",
                   "--candidate", "a.py", "--candidate", "b.py", "--cache-dir", "/c", "-j", "2"]
