"""A small fake-news pair set in the published CSV layout, written by tests.

The rows are made up here (no data download): ten claims, each paired with a
restatement (agreed), a refutation (disagreed) and another claim
(unrelated), plus a fourth pair that alternates agreed / unrelated. The files
keep the competition's columns `id, tid1, tid2, title1_zh, title2_zh,
title1_en, title2_en, label`; test.csv has no label column. Some fields need
CSV quoting (commas, double quotes, a line break).

Example:
    rows = write_fakenews(tmp_path)   # train.csv, dev.csv, test.csv
    dev_labels = [row[-1] for row in rows["dev"]]
"""

import csv

HEADER = [
  "id",
  "tid1",
  "tid2",
  "title1_zh",
  "title2_zh",
  "title1_en",
  "title2_en",
  "label",
]

CLAIMS = [
  ("喝柠檬水可以治好感冒", "Lemon water cures a cold"),
  ("明年起高速公路全部免费", "Highways are free from next year"),
  ("睡前吃香蕉会导致失眠", "A banana at bedtime causes insomnia"),
  ("本市将给每人发放五千元补贴", "The city gives everyone 5000 yuan"),
  ("手机充电时接电话会爆炸", "Phones explode when used while charging"),
  ("每天跑步十公里能多活二十年", "Running 10 km a day adds twenty years"),
  ("微波炉加热的饭菜致癌", "Microwaved food causes cancer"),
  ("银行存款下月起要交新税", "Bank deposits get a new tax next month"),
  ("冬天开窗睡觉容易中风", "Sleeping with the window open causes strokes"),
  ("多喝咖啡可以预防近视", "Coffee prevents short sight"),
]


def _pairs():
  """(title2_zh, title2_en, label) for each claim, four per claim."""
  rows = []
  for i, (claim, claim_en) in enumerate(CLAIMS):
    other, other_en = CLAIMS[(i + 3) % len(CLAIMS)]
    rows.append((i, "专家证实：" + claim, "Experts: " + claim_en, "agreed"))
    rows.append(
      (
        i,
        "网警辟谣：“%s”是谣言，不要再转发了！" % claim,
        'Police: "%s" is a rumour' % claim_en,
        "disagreed",
      )
    )
    rows.append((i, other + "，你信吗？", other_en + ", really?", "unrelated"))
    if i % 2:
      rows.append((i, "转发！" + claim + "\n速看", claim_en, "agreed"))
    else:
      rows.append((i, "今天天气晴朗，适合出游", "Sunny today", "unrelated"))
  return rows


def fakenews_rows():
  """All 40 rows as lists of the 8 published columns."""
  rows = []
  for n, (claim_index, title2, title2_en, label) in enumerate(_pairs()):
    claim, claim_en = CLAIMS[claim_index]
    rows.append(
      [
        str(1000 + n),
        str(claim_index),
        str(100 + n),
        claim,
        title2,
        claim_en,
        title2_en,
        label,
      ]
    )
  return rows


def _write(path, rows, labelled=True):
  columns = len(HEADER) if labelled else len(HEADER) - 1
  with open(path, "w", encoding="utf-8", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(HEADER[:columns])
    writer.writerows(row[:columns] for row in rows)


def write_fakenews(folder):
  """Writes train.csv (32 rows), dev.csv (every fifth row from the third: 8
  rows, all three labels) and test.csv (dev's rows without the label column)
  into `folder`; returns {"train": rows, "dev": rows}."""
  rows = fakenews_rows()
  dev = rows[2::5]
  train = [row for row in rows if row not in dev]
  _write(folder / "train.csv", train)
  _write(folder / "dev.csv", dev)
  _write(folder / "test.csv", dev, labelled=False)
  return {"train": train, "dev": dev}
