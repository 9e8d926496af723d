"""A generated memory-of-conversations benchmark: invented chat logs in org, with
questions that name the turns holding their answer.

    python bench/dialogue_corpus.py OUT_DIR [--seed 28] [--user NAME] [--wordy]

Deterministic for a seed. Writes ``OUT_DIR/roam/chat-NAME.org`` (one file per
conversation between "Me" and a friend, one dated heading per session,
``* [2024-01-08 Mon 19:40] Session title``, each turn a paragraph ``Name: text``; one
conversation also stamps its turns ``[HH:MM] Name: text`` and has a long pause inside
some sessions) and ``OUT_DIR/questions.json``: each question with its ``kind`` (``fact``,
``across``, ``when``, ``open``) and the exact text of its evidence turns.

Everything is invented here: people, places and events come from the small pools below,
combined by the seeded generator. Each conversation has storylines that run over several
sessions (a step per session), chit-chat around them that reuses their words (dogs,
trips, classes) so that words alone do not find the evidence, and the user's own
storylines, which first-person questions ask about.

``--user NAME`` writes the same conversations between two named people, as a shared chat
log or a transcript of others reads: the user's turns are ``NAME: text`` instead of
``Me: text``, and every question names NAME where it said "I", "my" or "me" (so no
question is in the first person, and no speaker is one of the daemon's
``user_speakers``). ``--wordy`` gives every turn one to three asides around what it
says (turns of 100-250 characters, sessions of several scenes, as in long chats).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
from pathlib import Path

FRIENDS = ["Priya", "Tomas", "Amara", "Kenji"]
POOLS = {
    "breed": ["beagle", "border collie", "greyhound", "dachshund", "corgi", "whippet"],
    "pet": ["Biscuit", "Pepper", "Juniper", "Waffles", "Noodle", "Clementine"],
    "item": ["running shoes", "sofa cushion", "passport cover", "garden hose", "headphones"],
    "ailment": ["an ear infection", "a sprained paw", "a mild allergy to chicken", "a cracked tooth"],
    "company": ["Halvorsen Logistics", "Bright Kettle Studio", "Marrow & Finch", "Tidewater Analytics", "Quillon Labs"],
    "role": ["data analyst", "junior architect", "product designer", "sound engineer", "copy editor"],
    "manager": ["Greta", "Oluwaseun", "Birgit", "Rafael", "Hyun-woo"],
    "city": ["Porto", "Ljubljana", "Tbilisi", "Valletta", "Bergen", "Oaxaca"],
    "highlight": ["a cable car over the river", "a tiny jazz bar in a cellar", "the fish market at dawn", "a hike to a glacier lake"],
    "hobby": ["pottery", "bouldering", "cello", "life drawing", "salsa", "woodturning"],
    "venue": ["community centre on Alder Road", "old tram depot", "library annex", "church hall by the canal"],
    "teacher": ["Mrs Okafor", "Luis", "Annika", "Mr Delacroix"],
    "race": ["Harbour Half Marathon", "Ridgeway 10k", "Lakeside Trail Run", "Night Bridge Run"],
    "bodypart": ["left knee", "right ankle", "lower back", "hamstring"],
    "racetime": ["1 hour 52 minutes", "48 minutes", "2 hours 5 minutes", "53 minutes"],
    "pct": ["12", "15", "8", "20"],
    "district": ["Eastgate", "Millbrook", "the old docks", "Larkhill"],
    "furniture": ["wardrobe", "piano", "bunk bed", "fridge"],
    "relative": ["cousin", "brother", "sister", "aunt"],
    "relname": ["Ines", "Mateo", "Sunniva", "Dariusz", "Leila"],
    "venue2": ["a barn outside town", "a lighthouse", "a botanical garden", "a rowing club"],
    "book": ["The Salt Archive", "Nine Winters in Kurrin", "A Lantern for Oddny", "The Copper Orchard"],
    "author": ["Mirela Voss", "T. J. Abernathy", "Keiko Arden", "Samuel Oyelaran"],
    "language": ["Portuguese", "Japanese", "Welsh", "Turkish", "Finnish"],
    "tutor": ["Beatriz", "Haruki", "Gwen", "Emre", "Aino"],
    "town": ["Saltcombe", "Merrow Bay", "Kilbraddan", "Porthleven"],
    "part": ["alternator", "clutch", "starter motor", "fuel pump"],
    "place": ["the ring road", "a petrol station in Dunmere", "the supermarket car park"],
    "dish": ["a lemon tart", "beef rendang", "mushroom pierogi", "a seafood paella"],
    "occasion": ["my parents' anniversary", "the office potluck", "a birthday dinner"],
    "month": ["March", "April", "June", "July", "September", "October"],
}

# Storylines: (title, who tells it, steps); each step is (what the other one asks, the
# evidence turn, a reaction, one-fact question, its answer's kind). "F" is the friend,
# "Me" the user. Questions name the friend as {F}.
STORIES = [
    ("dog", "F", [
        ("Any news from your side?", "We adopted a {breed} from the shelter on Saturday, we named her {pet}.",
         "What kind of dog did {F} adopt, and what is she called?"),
        ("How is the new family member?", "{pet} chewed straight through my {item} yesterday, I could have cried.",
         "What did {F}'s dog chew up?"),
        ("Is {pet} feeling better?", "The vet said it was {ailment}, she is on medicine and bouncing around again.",
         "What did the vet find wrong with {F}'s dog?"),
    ], "How has life with {F}'s dog gone since the adoption?"),
    ("job", "F", [
        ("How did the interviews go?", "I got the offer from {company}, I start as a {role} next month.",
         "Which company hired {F}, and for what role?"),
        ("How is the new job treating you?", "My manager {manager} is great, but the commute takes over an hour each way.",
         "Who is {F}'s manager at the new job?"),
        ("Still happy at work?", "I handed in my notice at {company}, the travelling wore me out completely.",
         "Why did {F} quit the job?"),
    ], "What happened with {F}'s job at {company} over the months?"),
    ("trip", "F", [
        ("Any holiday plans this year?", "We booked eight days in {city} for {month}, flights were cheap.",
         "Where is {F} travelling on holiday?"),
        ("You're back! How was it?", "{city} was wonderful, the best part was {highlight}.",
         "What was the highlight of {F}'s holiday?"),
    ], "Tell me about {F}'s holiday from planning to coming back."),
    ("hobby", "F", [
        ("Doing anything fun in the evenings?", "I signed up for a {hobby} course at the {venue}.",
         "What course did {F} sign up for?"),
        ("How's the course going?", "The teacher, {teacher}, says I have a good eye but no patience.",
         "What did {F}'s teacher say about them?"),
        ("Are you still going to the course?", "We had the end of term show on Friday and I did not embarrass myself.",
         "How did {F}'s course end?"),
    ], "How did {F}'s {hobby} course go overall?"),
    ("race", "F", [
        ("Still running in the mornings?", "I entered the {race}, it's my first proper race.",
         "Which race did {F} enter?"),
        ("How's the training?", "I hurt my {bodypart} on a long run, the physio says two weeks of rest.",
         "What injury did {F} get while training?"),
        ("Did the race happen?", "I finished the {race} in {racetime}, my legs are jelly.",
         "What was {F}'s finishing time?"),
    ], "How did {F}'s race preparation go, from signing up to the finish?"),
    ("flat", "F", [
        ("How is the flat?", "The landlord is putting the rent up by {pct} percent, we're going to look around.",
         "By how much is {F}'s rent going up?"),
        ("Found anything?", "We signed for a place in {district}, it has a balcony facing the park.",
         "Where is {F}'s new flat?"),
        ("Did the move go okay?", "Moving day was chaos, the {furniture} would not fit through the stairwell.",
         "What went wrong on {F}'s moving day?"),
    ], "What happened with {F}'s housing this year?"),
    ("wedding", "F", [
        ("Any family news?", "My {relative} {relname} is getting married in {month}!",
         "Who in {F}'s family is getting married?"),
        ("How was the wedding?", "The ceremony was at {venue2} and it rained only during the speeches.",
         "Where was the wedding held?"),
    ], "What did {F} tell me about the family wedding?"),
    ("book", "F", [
        ("Reading anything good?", "I'm halfway through {book} by {author}, it's slow but gorgeous.",
         "What book was {F} reading?"),
        ("Did you finish the book?", "Finished {book} last night, the ending made me furious and I loved it.",
         "What did {F} think of the ending of the book?"),
    ], "What did {F} say about the book they were reading?"),
    ("language", "Me", [
        ("What have you been up to?", "I started learning {language} with a tutor called {tutor}, twice a week.",
         "When did I start learning {language}?"),
        ("How are the lessons?", "{tutor} makes me read children's stories aloud, my pronunciation is still terrible.",
         "What did I say about my {language} lessons?"),
        ("Did you take the test?", "I passed the {language} exam, the oral part was the hardest.",
         "Did I pass my {language} exam?"),
    ], "How have my {language} studies gone?"),
    ("coast", "Me", [
        ("You sounded restless last time.", "I keep thinking about moving to {town}, somewhere near the sea with less noise.",
         "Where did I say I might move?"),
        ("Still dreaming of the seaside?", "I visited {town} for a weekend, the rents are fine but there's almost no work.",
         "What did I find out when I visited {town}?"),
        ("So, are you moving?", "I decided to stay for now, maybe in two years when I can work remotely.",
         "What did I decide about moving?"),
    ], "What did I say about moving to {town}?"),
    ("car", "Me", [
        ("Why were you late yesterday?", "My car broke down on {place}, the mechanic says it's the {part}.",
         "What was wrong with my car?"),
        ("Is the car fixed?", "Got the car back, the repair cost more than the car is worth honestly.",
         "What did I say about the car repair bill?"),
    ], "What happened with my car?"),
    ("cooking", "Me", [
        ("Cooked anything new?", "I tried to make {dish} for {occasion} and it actually worked.",
         "What did I cook for {occasion}?"),
    ], "What did I cook recently?"),
]
WHEN = {"dog": "When did {F} adopt the dog?", "job": "When did {F} get the job offer?",
        "trip": "When did {F} come back from {city}?", "hobby": "When did {F} sign up for the course?",
        "race": "When did {F} finish the race?", "flat": "When did {F} sign for the new flat?",
        "wedding": "When did {F} tell me about the wedding?", "book": "When did {F} finish the book?",
        "language": "When did I pass the {language} exam?", "coast": "When did I visit {town}?",
        "car": "When did my car break down?", "cooking": "When did I cook {dish}?"}  # fmt: skip
# Which step's turn answers the when question (index into the storyline's steps).
WHEN_STEP = {"dog": 0, "job": 0, "trip": 1, "hobby": 0, "race": 2, "flat": 1, "wedding": 0, "book": 1,
             "language": 2, "coast": 1, "car": 0, "cooking": 0}  # fmt: skip
CHAT = [
    ("Hey, how are you?", "Tired but fine. Long week."),
    ("Did you watch the match on Sunday?", "Only the second half, the first was too painful."),
    ("The weather has been miserable.", "Rain every single day, my umbrella gave up."),
    ("My neighbour's dog barked all night again.", "Earplugs. Trust me, earplugs."),
    ("I need a holiday so badly.", "Don't we all. Maybe a long weekend somewhere."),
    ("Have you tried the new bakery on the corner?", "Yes, the cardamom buns are dangerous."),
    ("My sister says hi.", "Say hi back! Is she still in the choir?"),
    ("I think I'm getting a cold.", "Ginger tea and sleep, that's my advice."),
    ("Work is just meetings lately.", "Same here, meetings about meetings."),
    ("I finally fixed the squeaky door.", "Victory! What was it in the end?"),
    ("Did you see the photos I sent?", "Yes, the sunset one is beautiful."),
    ("I'm thinking of taking a class of some sort.", "You should, it's good to get out of the house."),
    ("The train was cancelled again this morning.", "Of course it was. Did you get in late?"),
    ("We should go hiking when it's warmer.", "Definitely, I'll bring the snacks."),
    ("My phone screen cracked.", "Oh no. Again?"),
    ("I watched a documentary about octopuses.", "They are so clever, it's a bit scary."),
    ("Are you coming to the quiz night?", "If I finish work in time, yes."),
    ("I bought way too many plants.", "There's no such thing as too many plants."),
    ("My landlord still hasn't fixed the heating.", "Send him an email, in writing is better."),
    ("Did you get any sleep?", "Four hours. I'm running on coffee."),
    ("I've been cooking a lot more.", "Nice, anything good?"),
    ("The park was full of dogs today.", "Spring does that. Everyone is outside."),
    ("I'm saving up for a new bike.", "A road bike or something sturdier?"),
    ("Remember that cafe with the blue door?", "It closed down, sadly."),
    ("I keep forgetting to call my grandmother.", "Set a reminder, she'd love to hear from you."),
    ("My cousin visited last weekend.", "Fun! Did you show them around?"),
    ("The concert tickets sold out in minutes.", "Typical. Maybe resale later."),
    ("I started journaling again.", "Paper or an app?"),
    ("Traffic was horrible today.", "Roadworks everywhere this month."),
    ("I think I'll paint the bathroom.", "Pick a bright colour, it's a small room."),
]
# With --wordy each turn carries one to three of these around what it says.
ASIDES = [
    "Honestly, it has been one of those weeks.", "Anyway, that's my news for now.",
    "I was thinking about this on the bus this morning.", "Sorry, I keep getting distracted by the telly.",
    "It's funny how things turn out sometimes.", "Let me know what you think when you have a minute.",
    "I'm writing this with a cup of tea in one hand.", "No rush to answer, by the way.",
    "My brain is a bit fried today, so bear with me.", "I told my mum the same thing yesterday.",
    "Not sure why I'm telling you all this at midnight.", "Speaking of which, I owe you a coffee.",
    "It reminded me of that summer we spent doing nothing.", "Ha, you know how I get about these things.",
    "Anyway, enough about that.", "I'll send you the details later if I remember.",
]
TITLES = ["Catching up", "Evening chat", "Quick hello", "Sunday talk", "Late night", "Lunch break chat",
          "After work", "Long call", "Morning messages", "Weekend plans"]  # fmt: skip


def _fill(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(v) for k, v in POOLS.items()}


def conversation(rng: random.Random, friend: str, mine: tuple, stamped: bool, wordy: bool = False) -> tuple[str, list[dict]]:
    """One conversation's org text and its questions: the friend's storylines and
    ``mine``, one of the user's (each told to one friend only, so that every evidence
    turn is written once in the whole benchmark)."""
    slots = {**_fill(rng), "F": friend}
    stories = [s for s in STORIES if s[1] == "F"] + [mine]
    sessions = 18
    plan: dict[int, list[tuple]] = {i: [] for i in range(sessions)}
    for story in stories:
        steps = story[2]
        starts = sorted(rng.sample(range(sessions), len(steps)))
        for n, (step, session) in enumerate(zip(steps, starts)):
            plan[session].append((story, n, step))
    day = dt.datetime(2024, 1, 6, 19, 0) + dt.timedelta(days=rng.randrange(20))
    lines = [f"#+title: Chats with {friend}", ""]
    turns_seen: dict[tuple[str, int], tuple[str, str]] = {}  # (story, step) -> (turn text, date)
    for s in range(sessions):
        day += dt.timedelta(days=rng.randrange(6, 16), minutes=rng.randrange(-120, 120))
        lines.append(f"* {day.strftime('[%Y-%m-%d %a %H:%M]')} {rng.choice(TITLES)}")
        clock = day
        talk: list[tuple[str, str, tuple | None]] = []
        chat = rng.sample(CHAT, 7)
        for a, b in chat[:2]:
            who = rng.choice([("Me", friend), (friend, "Me")])
            talk += [(who[0], a, None), (who[1], b, None)]
        events = plan[s]
        rng.shuffle(events)
        for i, (story, n, (ask, tell, _q)) in enumerate(events):
            teller = friend if story[1] == "F" else "Me"
            other = "Me" if teller == friend else friend
            talk.append((other, ask.format(**slots), None))
            talk.append((teller, tell.format(**slots), (story[0], n)))
            talk.append((other, rng.choice(["No way!", "That's big news.", "Oh, I didn't expect that.",
                                            "Good for you.", "Ha, typical.", "Tell me more next time."]), None))
            a, b = chat[2 + i % 5]
            talk += [(teller, a, None), (other, b, None)]
        for a, b in chat[2 + len(events):]:
            talk += [("Me", a, None), (friend, b, None)]
        pause = stamped and rng.random() < 0.4 and len(talk) > 8
        for t, (who, text, mark) in enumerate(talk):
            clock += dt.timedelta(minutes=rng.randrange(1, 4) + (70 if pause and t == len(talk) // 2 else 0))
            prefix = f"[{clock.strftime('%H:%M')}] " if stamped else ""
            if wordy:  # as people write in long chats: a sentence or two around the point
                text = " ".join([*rng.sample(ASIDES, rng.randint(0, 1)), text, *rng.sample(ASIDES, rng.randint(1, 2))])
            line = f"{who}: {text}"
            lines += [prefix + line, ""]
            if mark:
                turns_seen[mark] = (line, day.date().isoformat())
    questions: list[dict] = []
    for story in stories:
        name, _, steps, across = story
        evidence = [turns_seen[(name, n)][0] for n in range(len(steps))]
        for n, step in enumerate(steps):
            questions.append({"kind": "fact", "question": step[2].format(**slots), "evidence": [evidence[n]]})
        w = WHEN_STEP[name]
        questions.append({"kind": "when", "question": WHEN[name].format(**slots), "evidence": [evidence[w]],
                          "date": turns_seen[(name, w)][1]})
        if len(steps) > 1:
            questions.append({"kind": "across", "question": across.format(**slots), "evidence": evidence})
        questions.append({"kind": "open", "question": _open(name, story[1], slots), "evidence": evidence})
    return "\n".join(lines) + "\n", questions


def _open(name: str, teller: str, slots: dict) -> str:
    """An open question about a storyline, worded away from its turns."""
    about = {"dog": "their pet", "job": "their career", "trip": "travel", "hobby": "what they do in the evenings",
             "race": "running", "flat": "where they live", "wedding": "their family", "book": "reading",
             "language": "learning languages", "coast": "living by the sea", "car": "my car",
             "cooking": "cooking"}[name]  # fmt: skip
    if teller == "Me":
        return f"What have I been telling {slots['F']} about {about.replace('their', 'my').replace('they', 'I')}?"
    return f"What do I know about {slots['F']} and {about}?"


def third_person(question: str, user: str) -> str:
    """``question`` asked about ``user`` instead of "I": the first "I" or "my" names
    them, later ones are "they" and "their"."""
    out = re.sub(r"\bhave I been\b", f"has {user} been", question)
    out = re.sub(r"\bdo I know\b", f"does {user} know", out)
    out = re.sub(r"\btell me about the\b", f"tell {user} about the", out)

    def pronoun(m: re.Match) -> str:
        named = user in out[: m.start()]
        if m[0] == "I":
            return "they" if named else user
        return "their" if named else f"{user}'s"

    while (m := re.search(r"\b(?:I|my)\b", out)) is not None:
        out = out[: m.start()] + pronoun(m) + out[m.end():]
    return out


def named_user(text: str, questions: list[dict], user: str) -> tuple[str, list[dict]]:
    """The conversation with the user's turns spoken by ``user`` (see the module docstring)."""
    speaker = re.compile(r"^((?:\[\d{2}:\d{2}\] )?)Me: ", re.M)
    text = speaker.sub(lambda m: f"{m[1]}{user}: ", text)
    questions = [{**q, "question": third_person(q["question"], user),
                  "evidence": [speaker.sub(lambda m: f"{m[1]}{user}: ", e) for e in q["evidence"]]} for q in questions]  # fmt: skip
    return text, questions


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--seed", type=int, default=28)
    p.add_argument("--user", help="the user's name as a speaker, instead of Me (see the module docstring)")
    p.add_argument("--wordy", action="store_true", help="longer turns: each with one to three asides around it")
    args = p.parse_args()
    rng = random.Random(args.seed)
    roam = args.out / "roam"
    roam.mkdir(parents=True, exist_ok=True)
    questions = []
    for i, friend in enumerate(FRIENDS):
        text, qs = conversation(rng, friend, [s for s in STORIES if s[1] == "Me"][i], stamped=i == 3, wordy=args.wordy)
        if args.user:
            text, qs = named_user(text, qs, args.user)
        (roam / f"chat-{friend.lower()}.org").write_text(text, encoding="utf-8")
        questions += [{**q, "conversation": friend} for q in qs]
    (args.out / "questions.json").write_text(json.dumps(questions, indent=1), encoding="utf-8")
    kinds = {k: sum(q["kind"] == k for q in questions) for k in ("fact", "across", "when", "open")}
    print(f"{len(FRIENDS)} conversations, {len(questions)} questions {kinds} in {args.out}")


if __name__ == "__main__":
    main()
