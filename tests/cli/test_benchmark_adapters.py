"""Public benchmark adapters on the project's own fixtures (tests/synth/fixtures/<name>/)."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest

from lasagna_cli.engine.benchmarks import (
    MISSING_ANSWER,
    BenchmarkFileError,
    EngineError,
    EngineUsageError,
    UnknownBenchmarkError,
    benchmark_names,
    get_benchmark_spec,
    list_benchmarks,
    load_benchmark,
)

# The adapters' fixtures stay beside lasagna-synth's tests, where the CLI's tests read them too.
FIXTURES = Path(__file__).resolve().parents[1] / "synth" / "fixtures"


def by_id(bench: object) -> dict[str, object]:
    return {q.id: q for q in bench.questions}  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- registry


def test_registry_lists_every_benchmark_with_licence_citation_splits_and_categories() -> None:
    assert benchmark_names() == (
        "locomo",
        "syllabusqa",
        "qasper",
        "financebench",
        "squad",
        "beir",
        "chroma-chunking",
    )
    for spec in list_benchmarks():
        assert spec.licence and spec.citation and spec.homepage
        assert spec.default_split in spec.splits
        assert spec.categories
        assert spec.rubric in ("binary", "scale")
        assert spec.default_instruction
    assert get_benchmark_spec("locomo").rubric == "binary"
    assert {s.rubric for s in list_benchmarks() if s.name != "locomo"} == {"scale"}


def test_unknown_benchmark_is_a_usage_error_with_a_suggestion() -> None:
    with pytest.raises(UnknownBenchmarkError, match="did you mean 'locomo'") as info:
        load_benchmark("locomoo", FIXTURES / "locomo")
    assert isinstance(info.value, EngineUsageError)


def test_unknown_split_names_the_splits() -> None:
    with pytest.raises(UnknownBenchmarkError, match="train, val, test") as info:
        load_benchmark("syllabusqa", FIXTURES / "syllabusqa", "dev")
    assert isinstance(info.value, EngineUsageError)


def test_prompt_has_context_category_instruction_missing_rule_and_question() -> None:
    spec = get_benchmark_spec("locomo")
    prompt = spec.build_prompt("When?", "2", ["ctx one", "ctx two"])
    assert prompt.startswith("ctx one\n\nctx two\n\n")
    assert spec.instructions["2"] in prompt
    assert f'write "{MISSING_ANSWER}"' in prompt
    assert prompt.endswith("Question: When?\n\nAnswer:")
    # A category without an instruction of its own gets the default one.
    assert spec.default_instruction in spec.build_prompt("Q?", "9", ["c"])


def test_squad_prompt_does_not_reveal_unanswerable_questions() -> None:
    spec = get_benchmark_spec("squad")
    assert spec.build_prompt("Q?", "answerable", ["c"]) == spec.build_prompt(
        "Q?", "unanswerable", ["c"]
    )


# ------------------------------------------------------------------------------ LoCoMo


def test_locomo_documents_are_markdown_with_dates_and_turn_ids() -> None:
    bench = load_benchmark("locomo", FIXTURES / "locomo")
    assert [d.id for d in bench.documents] == ["conv-a", "conv-b"]
    text = bench.documents[0].text
    assert text.startswith("# Conversation conv-a between Ines and Tomas\n")
    assert "## Session 1\nDATE: 9:15 am on 3 March, 2023\n" in text
    assert "**Tomas**: Great news. Is it the one at the harbour studio? [D1:2]\n" in text
    # A shared image's caption stays in the turn; every turn ends in its dialogue id.
    assert "(shares an image: a photo of a blue clay bowl on a wheel) [D1:3]" in text
    for line in text.splitlines():
        if line.startswith("**"):
            assert line.endswith("]")
    # A session with a date but no turns is not a session.
    assert "Session 3" not in text


def test_locomo_questions_follow_the_rules() -> None:
    bench = load_benchmark("locomo", FIXTURES / "locomo")
    questions = by_id(bench)
    # Category 5 is skipped and counted; ids are positions in the raw qa list.
    assert "conv-a/q3" not in questions and "conv-b/q3" not in questions
    assert bench.skipped == {"category 5 (adversarial)": 2}
    assert len(bench.questions) == 8
    assert questions["conv-a/q0"].references == ("19 March 2023",)
    assert questions["conv-a/q0"].evidence == ("D2:1",)
    assert questions["conv-a/q0"].category == "2"
    assert questions["conv-a/q0"].doc_ids == ("conv-a",)
    # Several ids in one raw item are split; answers become strings; empty -> Not mentioned.
    assert questions["conv-a/q1"].evidence == ("D1:2", "D1:3")
    assert questions["conv-a/q2"].references == ("8",)
    assert questions["conv-a/q5"].references == (MISSING_ANSWER,)
    # "D:1:1" is repaired, "D" has no id and is dropped; the notes count both.
    assert questions["conv-a/q5"].evidence == ("D1:1",)
    assert questions["conv-a/q4"].evidence == ()
    assert any(
        "2 raw items split or repaired" in n and "1 with no readable id" in n for n in bench.notes
    )


def test_locomo_reads_the_file_itself_and_a_single_conversation(tmp_path: Path) -> None:
    path = FIXTURES / "locomo" / "locomo10.json"
    assert len(load_benchmark("locomo", path).questions) == 8
    single = tmp_path / "locomo10.json"
    single.write_text(json.dumps(json.loads(path.read_text())[1]))
    bench = load_benchmark("locomo", tmp_path)
    assert [d.id for d in bench.documents] == ["conv-b"]


def test_locomo_evidence_given_as_one_string_is_read(tmp_path: Path) -> None:
    samples = json.loads((FIXTURES / "locomo" / "locomo10.json").read_text())
    samples[0]["qa"][1]["evidence"] = "D1:2; D1:3"
    (tmp_path / "locomo10.json").write_text(json.dumps(samples))
    questions = by_id(load_benchmark("locomo", tmp_path))
    assert questions["conv-a/q1"].evidence == ("D1:2", "D1:3")  # type: ignore[attr-defined]


def test_missing_file_says_which_and_where_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkFileError) as info:
        load_benchmark("locomo", tmp_path)
    message = str(info.value)
    assert "locomo10.json" in message and str(tmp_path) in message
    assert "https://github.com/snap-research/LoCoMo" in message
    assert isinstance(info.value, EngineUsageError)
    with pytest.raises(BenchmarkFileError, match="does not exist"):
        load_benchmark("qasper", tmp_path / "nowhere")


def test_malformed_raw_file_is_a_data_error(tmp_path: Path) -> None:
    (tmp_path / "locomo10.json").write_text('{"conversations": 3}')
    with pytest.raises(EngineError, match="sample_id, conversation and qa") as info:
        load_benchmark("locomo", tmp_path)
    assert not isinstance(info.value, EngineUsageError)
    (tmp_path / "locomo10.json").write_text("[1, 2")
    with pytest.raises(EngineError, match="not valid JSON") as info:
        load_benchmark("locomo", tmp_path)
    assert not isinstance(info.value, EngineUsageError)


# -------------------------------------------------------------------------- SyllabusQA


def test_syllabusqa_from_csv() -> None:
    bench = load_benchmark("syllabusqa", FIXTURES / "syllabusqa", "test")
    questions = by_id(bench)
    assert "t003" not in questions  # "no answer" is skipped
    assert bench.skipped == {"question type 'no answer'": 1}
    q = questions["t001"]
    assert q.question == 'Based on the syllabus "BIO 101 Fall", When are office hours?'
    assert q.references == ("Tuesdays 2-4 pm in room 210",)
    assert q.evidence == ("Office hours: Tuesdays 2-4 pm in room 210",)  # stripped
    assert q.category == "single factual"
    assert q.doc_ids == ("BIO 101 Fall",)
    assert questions["t002"].evidence == ("Attendance counts for 10% of the grade.",)
    # Reasoning steps follow the spans, stripped and de-duplicated in order.
    assert questions["t004"].evidence == (
        "The final is worth 40% of the grade.",
        "A pass needs 62 overall.",
    )
    assert questions["t006"].evidence == (
        "Required: OpenIntro Statistics",
        "Optional: An Introduction to Statistical Learning (ISLR)",
    )


def test_syllabusqa_reads_mac_roman_syllabi_with_cr_line_ends() -> None:
    bench = load_benchmark("syllabusqa", FIXTURES / "syllabusqa", "test")
    assert [d.id for d in bench.documents] == ["BIO 101 Fall", "Stats 240"]
    text = bench.document("BIO 101 Fall").text
    assert text.startswith("BIO 101 Fall – Syllabus\n\nOffice hours:")
    assert "• Attendance" in text and "instructor’s email" in text
    assert "\r" not in text


def test_syllabusqa_missing_syllabus_texts_are_named(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkFileError, match="syllabi_text_val"):
        load_benchmark("syllabusqa", FIXTURES / "syllabusqa", "val")
    shutil.copytree(FIXTURES / "syllabusqa", tmp_path / "s")
    (tmp_path / "s" / "syllabi_text_test" / "Stats 240.txt").unlink()
    with pytest.raises(BenchmarkFileError, match=r"Stats 240\.txt"):
        load_benchmark("syllabusqa", tmp_path / "s", "test")


def test_syllabusqa_all_reads_every_csv_split_grouped_by_syllabus(tmp_path: Path) -> None:
    """Split all, as OpenViking's adapter reads a folder: every CSV split in name order (a
    CSV without the question columns is left out, with a note), the questions grouped by
    syllabus in first-appearance order, the answer as written."""
    shutil.copytree(FIXTURES / "syllabusqa", tmp_path / "s")
    folder = tmp_path / "s"
    rows = (folder / "test.csv").read_text().splitlines()
    header, body = rows[0], rows[1:]
    (folder / "test.csv").write_text("\n".join([header, *body[1:]]) + "\n")
    (folder / "val.csv").write_text(header + "\n" + body[0].replace("room 210", "room 210 ") + "\n")
    (folder / "syllabi_meta_info.csv").write_text("name,filename\nBIO 101 Fall,BIO 101 Fall\n")
    bench = load_benchmark("syllabusqa", folder, "all")
    ids = [q.id for q in bench.questions]
    assert ids[0] == "t002" and "t001" in ids  # test.csv before val.csv, BIO 101's together
    by_syllabus = [q.doc_ids[0] for q in bench.questions]
    assert by_syllabus == sorted(by_syllabus, key=by_syllabus.index)  # grouped
    assert by_id(bench)["t001"].references == ("Tuesdays 2-4 pm in room 210 ",)
    assert bench.notes == (
        "syllabi_meta_info.csv: not a question file (no syllabus_name, question, "
        "question_type columns); left out",
    )


def test_syllabusqa_reads_a_docx_syllabus_before_its_text(tmp_path: Path) -> None:
    """OpenViking reads the Word syllabi of syllabi/syllabi_redacted/word/; lasagna reads
    them through lasagna-synth's loader, and the text file only where there is no .docx."""
    docx = pytest.importorskip("docx")
    shutil.copytree(FIXTURES / "syllabusqa", tmp_path / "s")
    word = tmp_path / "s" / "syllabi" / "syllabi_redacted" / "word"
    word.mkdir(parents=True)
    document = docx.Document()
    document.add_heading("BIO 101 Fall", level=1)
    document.add_paragraph("Office hours: Tuesdays 2-4 pm in room 210, from the Word file.")
    document.save(str(word / "BIO 101 Fall.docx"))
    bench = load_benchmark("syllabusqa", tmp_path / "s", "all")
    assert "from the Word file" in bench.document("BIO 101 Fall").text
    assert "Stats" in bench.document("Stats 240").text  # no .docx: the text file
    assert word / "BIO 101 Fall.docx" in bench.files


def test_syllabusqa_json_grouped_by_syllabus(tmp_path: Path) -> None:
    (tmp_path / "syllabi_text").mkdir()
    (tmp_path / "syllabi_text" / "Chem 110.txt").write_text("Labs are taught by the TAs.")
    record = json.loads((FIXTURES / "syllabusqa" / "val.json").read_text())[0]
    del record["syllabus_name"]
    (tmp_path / "val.json").write_text(json.dumps({"Chem 110": [record]}))
    bench = load_benchmark("syllabusqa", tmp_path, "val")
    assert bench.questions[0].question.startswith('Based on the syllabus "Chem 110", ')
    assert bench.questions[0].evidence == ("Labs are taught by the teaching assistants.",)


# ------------------------------------------------------------------------------ Qasper


def test_qasper_references_evidence_and_skips() -> None:
    bench = load_benchmark("qasper", FIXTURES / "qasper", "dev")
    questions = by_id(bench)
    # Skipped only when every annotator marked it unanswerable.
    assert "q-speed" not in questions
    assert bench.skipped == {"every annotator: unanswerable": 1}
    ports = questions["q-ports"]
    assert ports.question == (
        'Based on the paper "Tiny Parsers for Tidal Logs", Which ports are used for evaluation?'
    )
    # One reference per annotator, de-duplicated in order; unanswerable -> Not mentioned.
    assert ports.references == ("Elvar; Skerra; Garrow", MISSING_ANSWER)
    assert ports.evidence == (
        "We evaluate on logs from Elvar, Skerra and Garrow.",
        "Table 1: Accuracy per port.",
    )
    assert ports.category == "extractive"
    assert questions["q-neural"].references == ("No",)
    assert questions["q-neural"].category == "yes_no"
    often = questions["q-often"]
    assert often.references == ("Every ten minutes.", "every ten minutes")
    assert often.category == "free_form"
    assert often.doc_ids == ("2001.00002",)


def test_qasper_corpus_is_the_full_text() -> None:
    bench = load_benchmark("qasper", FIXTURES / "qasper", "dev")
    text = bench.document("2001.00001").text
    assert text.startswith("# Tiny Parsers for Tidal Logs\nPaper ID: 2001.00001\n")
    assert "## Abstract\nWe parse harbour tide logs" in text
    assert "## Experiments\nWe evaluate on logs from Elvar, Skerra and Garrow.\n" in text
    assert "Table 1: Accuracy per port." in text


def test_qasper_finds_older_versions_by_pattern(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "qasper" / "qasper-dev-v0.3.json", tmp_path / "qasper-dev-v0.1.json")
    assert len(load_benchmark("qasper", tmp_path, "dev").questions) == 3
    with pytest.raises(BenchmarkFileError, match=r"qasper-test-v0\.3\.json"):
        load_benchmark("qasper", tmp_path, "test")


def test_qasper_all_reads_every_json_of_the_folder_as_openvikings_adapter(tmp_path: Path) -> None:
    """Split all: every *.json but sampling_metadata.json, in name order; a paper in two
    files is the later file's, in the first one's place."""
    papers = json.loads((FIXTURES / "qasper" / "qasper-dev-v0.3.json").read_text())
    first, second = list(papers)
    (tmp_path / "qasper-dev-v0.3.json").write_text(json.dumps({first: papers[first]}))
    (tmp_path / "qasper-train-v0.3.json").write_text(json.dumps({second: papers[second]}))
    (tmp_path / "sampling_metadata.json").write_text('{"dataset": "Qasper"}')
    both = load_benchmark("qasper", tmp_path, "all")
    assert [d.id for d in both.documents] == [first, second]
    assert [q.id for q in both.questions] == ["q-ports", "q-neural", "q-often"]
    assert load_benchmark("qasper", tmp_path, "dev").documents[0].id == first  # a split alone
    fewer = {**papers[first], "qas": papers[first]["qas"][:1]}
    (tmp_path / "z-extra.json").write_text(json.dumps({first: fewer}))
    again = load_benchmark("qasper", tmp_path, "all")
    assert [d.id for d in again.documents] == [first, second]  # first one's place
    assert [q.id for q in again.questions] == ["q-ports", "q-often"]  # the later copy
    assert all(q.metadata["openviking_category"] == "None" for q in again.questions)


# ------------------------------------------------------------------------ FinanceBench


def test_financebench_questions_grouped_by_document() -> None:
    bench = load_benchmark("financebench", FIXTURES / "financebench")
    assert [q.id for q in bench.questions] == [
        "financebench_id_00001",
        "financebench_id_00003",
        "financebench_id_00002",
        "financebench_id_00004",
    ]
    questions = by_id(bench)
    q = questions["financebench_id_00001"]
    assert q.references == ("$1204.00",)
    assert q.evidence == ("Purchases of property, plant and equipment (1,204)",)
    assert q.category == "metrics-generated"
    assert q.doc_ids == ("ACME_2020_10K",)
    # Empty evidence texts are left out.
    assert questions["financebench_id_00002"].evidence == (
        "The board declared a quarterly dividend of $0.12 per share.",
    )


def test_financebench_corpus_is_the_pdfs_never_the_evidence_pages() -> None:
    """As OpenViking's adapter: a filing without its PDF is not searched (its evidence
    pages would put the answers in the corpus); its questions are still asked."""
    bench = load_benchmark("financebench", FIXTURES / "financebench")
    acme = bench.document("ACME_2020_10K")
    assert acme.metadata["source"] == "pdf"
    assert "Purchases of property, plant and equipment (1,204)" in acme.text
    assert [d.id for d in bench.documents] == ["ACME_2020_10K"]
    assert any(q.doc_ids == ("BOREALIS_2021Q2_10Q",) for q in bench.questions)
    assert any("from PDFs: 1" in n and "not searched" in n and ": 1" in n for n in bench.notes)


def test_financebench_without_any_pdf_searches_nothing_and_says_so(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "financebench" / "financebench_open_source.jsonl", tmp_path)
    bench = load_benchmark("financebench", tmp_path)
    assert bench.documents == () and len(bench.questions) == 4
    assert any("from PDFs: 0" in n and "not searched" in n for n in bench.notes)


def test_financebench_without_text_skips_the_pdf() -> None:
    bench = load_benchmark("financebench", FIXTURES / "financebench", with_text=False)
    assert bench.document("ACME_2020_10K").text == ""
    assert len(bench.questions) == 4


def test_financebench_pdf_texts_are_cached_by_file_and_reader(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = load_benchmark("financebench", FIXTURES / "financebench", text_cache=cache)
    text = first.document("ACME_2020_10K").text
    (entry,) = cache.iterdir()
    assert entry.read_bytes().decode("utf-8") == text
    assert not any("text cache" in note for note in first.notes)
    # Read again (from any run folder): the cached text, not a new extraction.
    entry.write_text(text + "\nFROM THE CACHE", encoding="utf-8")
    second = load_benchmark("financebench", FIXTURES / "financebench", text_cache=cache)
    assert second.document("ACME_2020_10K").text.endswith("FROM THE CACHE")
    assert "PDF texts read from the text cache: 1" in second.notes
    # Other bytes are another file: extracted again, under a key of their own.
    copy = tmp_path / "data"
    shutil.copytree(FIXTURES / "financebench", copy)
    with (copy / "pdfs" / "ACME_2020_10K.pdf").open("ab") as handle:
        handle.write(b"\n% appended\n")
    third = load_benchmark("financebench", copy, text_cache=cache)
    assert third.document("ACME_2020_10K").text == text
    assert len(list(cache.iterdir())) == 2
    # Without text nothing is read or cached; a cache that cannot be written costs only time.
    load_benchmark("financebench", FIXTURES / "financebench", with_text=False, text_cache=cache)
    assert len(list(cache.iterdir())) == 2
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    fourth = load_benchmark("financebench", FIXTURES / "financebench", text_cache=blocked)
    assert fourth.document("ACME_2020_10K").text == text


# ----------------------------------------------------------------------------- SQuAD


def test_squad_paragraphs_are_documents_and_unanswerables_have_no_evidence() -> None:
    bench = load_benchmark("squad", FIXTURES / "squad")
    assert len(bench.documents) == 3
    doc = bench.documents[0]
    assert doc.id.startswith("Lighthouse#") and len(doc.id) == len("Lighthouse#") + 8
    assert doc.text.startswith("# Lighthouse\n\nThe Garrow Point lighthouse")
    questions = by_id(bench)
    assert questions["sq1"].references == ("1871", "in 1871")
    assert questions["sq1"].evidence == (doc.text.split("\n\n", 1)[1].strip(),)
    assert questions["sq1"].category == "answerable"
    assert questions["sq2"].references == (MISSING_ANSWER,)
    assert questions["sq2"].evidence == ()
    assert questions["sq2"].category == "unanswerable"
    assert questions["sq5"].category == "unanswerable"


# ------------------------------------------------------------------------------ BEIR


def test_beir_folder_through_the_shared_reader() -> None:
    bench = load_benchmark("beir", FIXTURES / "beir")
    assert [d.id for d in bench.documents] == ["d1", "d2", "d3", "d4"]
    assert bench.documents[0].text.startswith("Garrow Point\n\nThe Garrow Point lighthouse")
    questions = by_id(bench)
    assert list(questions) == ["q1", "q2", "q3"]  # q4 has no judgment
    assert questions["q1"].references == ()
    assert questions["q1"].evidence == (bench.document("d1").text,)  # score 0 is not relevant
    assert questions["q3"].doc_ids == ("d4", "d1")
    assert get_benchmark_spec("beir").sampling_unit == "question"


def test_beir_missing_corpus_names_the_file(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "beir", tmp_path / "b")
    (tmp_path / "b" / "corpus.jsonl").unlink()
    with pytest.raises(BenchmarkFileError, match=r"corpus\.jsonl is missing"):
        load_benchmark("beir", tmp_path / "b")


# ------------------------------------------------------------------ malformed raw files

_WRONG = [None, 7, "text", {"a": 1}, ["text"]]


def _places(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every nested place in a JSON value (the first two items of each list)."""
    places = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            places += _places(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:2]):
            places += _places(item, (*path, i))
    return places


def _replaced(value: object, path: tuple[object, ...], new: object) -> object:
    import copy

    changed = copy.deepcopy(value)
    holder = changed
    for key in path[:-1]:
        holder = holder[key]  # type: ignore[index]
    holder[path[-1]] = new  # type: ignore[index]
    return changed


@pytest.mark.parametrize(
    ("name", "file", "split"),
    [
        ("locomo", "locomo/locomo10.json", "test"),
        ("qasper", "qasper/qasper-dev-v0.3.json", "dev"),
        ("squad", "squad/dev-v2.0.json", "dev"),
        ("financebench", "financebench/financebench_open_source.jsonl", "open_source"),
    ],
)
def test_a_wrong_type_anywhere_in_a_raw_file_is_one_engine_error(
    tmp_path: Path, name: str, file: str, split: str
) -> None:
    # Any value replaced by a value of another type: the adapter reads it, or says in one
    # line what is wrong where (EngineError); never a TypeError or AttributeError.
    source = FIXTURES / file
    jsonl = source.suffix == ".jsonl"
    text = source.read_text(encoding="utf-8")
    data = [json.loads(line) for line in text.splitlines()] if jsonl else json.loads(text)
    target = tmp_path / source.name
    for path in _places(data):
        for wrong in _WRONG:
            changed = _replaced(data, path, wrong)
            if jsonl:
                lines = [json.dumps(row) for row in changed]  # type: ignore[attr-defined]
                target.write_text("\n".join(lines), encoding="utf-8")
            else:
                target.write_text(json.dumps(changed), encoding="utf-8")
            with contextlib.suppress(EngineError):
                load_benchmark(name, target, split, with_text=False)
