"""The posts `factbot bench latency` checks, and what a capable model and publishers say of them.

The script is `key: value` lines; an indented line continues the value; a `true:` or `false:`
line starts a claim of the post above it (accurate or not), followed by its search `queries`
(separated by `|`), the `fact` every article about it states, more `context` sentences of those
articles, and the judge's `explanation`.
"""

from __future__ import annotations

import click

from bench.standins import ScriptedClaim, ScriptedPost

_SCRIPT = """\
post: BREAKING: The Great Wall of China is the only man-made structure you can see from the
  Moon with the naked eye. And it was built in just ten years!
false: The Great Wall of China is visible from the Moon with the naked eye.
queries: Great Wall of China visible from Moon | astronauts see Great Wall from space
fact: Astronauts who walked on the Moon have said that no man-made structure, including the
  Great Wall of China, can be seen from there with the naked eye.
context: The wall is very long but mostly only a few metres wide, and its colour is close to
  that of the land around it, so from the Moon it cannot be seen.
context: From low Earth orbit, about 400 kilometres up, astronauts say spotting the Great Wall
  needs ideal light and usually a camera lens.
context: The myth that the Great Wall is visible from the Moon appeared in print decades before
  anyone had travelled to space.
explanation: No one on the Moon can see the Great Wall with the naked eye; astronauts who went
  there say no man-made structure is visible from that distance.
false: The Great Wall of China was built in ten years.
queries: how long did it take to build the Great Wall of China
fact: Historians say the Great Wall of China was built over roughly two thousand years, by many
  dynasties, not in a single decade.
context: The earliest walls were built in the seventh century BC, and much of the brick Great
  Wall seen today was built under the Ming dynasty.
context: Construction of the Great Wall of China went on in stages for centuries, with sections
  repaired, rebuilt and extended by later rulers.
context: No single decade, ruler or dynasty built the Great Wall of China, historians of the
  wall agree.
explanation: The Great Wall was built in stages over about two thousand years, not in ten.

post: Einstein failed maths at school and still won the Nobel Prize for his theory of
  relativity. Born in Germany in 1879, he proves that grades mean nothing!
false: Albert Einstein failed mathematics at school.
queries: Einstein failed math at school myth
fact: School records show that Albert Einstein did not fail mathematics; he had mastered
  calculus before he was fifteen.
context: Einstein's school reports from Switzerland show top marks in algebra and geometry, the
  records of his mathematics lessons show.
context: The story that Einstein failed mathematics may come from a confusion between two Swiss
  grading scales used at his school.
context: Einstein himself said he never failed in mathematics at school.
explanation: Einstein did not fail mathematics; his school records show excellent marks.
false: Albert Einstein won the Nobel Prize for his theory of relativity.
queries: Einstein Nobel Prize 1921 reason
fact: Albert Einstein received the 1921 Nobel Prize in Physics for his explanation of the
  photoelectric effect, not for his theory of relativity.
context: The Nobel committee's citation for Einstein's prize in physics names his services to
  theoretical physics and the law of the photoelectric effect.
context: Relativity was still disputed in the early 1920s, and the Nobel committee avoided
  giving Einstein the prize for it.
context: Einstein's Nobel Prize was awarded in 1922, for the year 1921.
explanation: Einstein's Nobel Prize was for the photoelectric effect, not for relativity.
true: Albert Einstein was born in Germany in 1879.
queries: Albert Einstein birthplace 1879
fact: Albert Einstein was born on 14 March 1879 in Ulm, a city in southern Germany.
context: Einstein's family moved from Ulm to Munich, in Germany, when Albert Einstein was a
  baby, a year after he was born.
context: Einstein later renounced German citizenship and became a Swiss citizen in 1901,
  decades after he was born in Germany.
context: The house in Ulm where Einstein was born in 1879 was destroyed in 1944.
explanation: Einstein was indeed born in Ulm, Germany, in March 1879.

post: Goldfish have a three-second memory and bats are completely blind. Nature is wild.
false: Goldfish have a memory of only three seconds.
queries: goldfish three second memory myth | goldfish memory experiments
fact: Experiments have shown that goldfish can remember feeding signals and routes for months,
  far longer than three seconds.
context: Researchers trained goldfish to push a lever for food, and the goldfish remembered it
  at the same time of day weeks later.
context: The three-second goldfish memory is a popular myth with no study behind it, biologists
  who study fish memory say.
context: Goldfish can also learn to tell colours, sounds and shapes apart, tests of their
  memory show.
explanation: Goldfish remember things for months; the three-second memory is a myth.
false: Bats are completely blind.
queries: are bats blind
fact: No species of bat is blind: bats can see, and many fruit bats rely on good eyesight
  rather than echolocation.
context: Bats that hunt insects use echolocation in the dark but also have working eyes that
  are sensitive to dim light.
context: Some bats can even see ultraviolet light, studies of bat eyes have found.
context: The saying 'blind as a bat' is wrong, zoologists say: bats are not blind.
explanation: Bats are not blind; all bats can see, and some rely mostly on their eyesight.

post: Lightning never strikes the same place twice, so tall buildings are safe in storms. Also,
  Mount Everest is the tallest mountain on Earth measured from base to peak.
false: Lightning never strikes the same place twice.
queries: lightning strikes same place twice | Empire State Building lightning
fact: Lightning often strikes the same place more than once; the Empire State Building is hit
  about twenty to twenty-five times a year.
context: Tall, pointed and isolated objects are struck by lightning again and again,
  meteorologists say, because they offer the easiest path.
context: A single lightning flash can even strike the ground in two or more places, high-speed
  cameras show.
context: The idea that lightning never strikes twice is a saying, not science, weather services
  say.
explanation: Lightning does strike the same place twice; tall buildings are hit many times.
false: Mount Everest is the tallest mountain on Earth measured from base to peak.
queries: tallest mountain base to peak Mauna Kea
fact: Measured from base to peak, Mauna Kea in Hawaii is taller than Mount Everest, rising more
  than 10,000 metres from the ocean floor.
context: Mount Everest has the highest summit above sea level, at 8,849 metres, but it rises
  from a high plateau, so it is not the tallest from base to peak.
context: Most of Mauna Kea is under the Pacific Ocean, which is why its height above sea level
  is only 4,207 metres.
context: Geographers distinguish a mountain's height above sea level from its height from base
  to peak, and Everest leads only the first list.
explanation: Everest has the highest summit, but Mauna Kea is taller from base to peak.

post: Humans only use 10 percent of their brains. Your heart stops every time you sneeze! And
  the Eiffel Tower grows about 15 centimetres taller in the summer heat.
false: Humans only use 10 percent of their brains.
queries: humans use 10 percent of brain myth
fact: Brain scans show that people use virtually all of their brain, and even simple tasks
  activate areas across it.
context: Damage to almost any part of the brain has effects, neurologists note, which would not
  be so if humans used only 10 percent of their brains.
context: The brain uses about 20 percent of the body's energy, far too much for an organ that
  is 90 percent idle.
context: The 10 percent brain myth has been traced to misquoted psychologists of the early
  twentieth century.
explanation: People use virtually all of their brain; the 10 percent figure is a myth.
false: The human heart stops every time you sneeze.
queries: does your heart stop when you sneeze
fact: Cardiologists say the heart does not stop during a sneeze; the change in chest pressure
  can only alter the heartbeat's rhythm briefly.
context: When you sneeze, the pressure in your chest rises and blood flow back to the heart
  changes for a moment, which can delay the next heartbeat.
context: The heart's electrical activity carries on through a sneeze, heart recordings show, so
  the heart does not stop.
context: The belief that the heart stops when you sneeze may explain the custom of saying bless
  you, historians suggest.
explanation: The heart keeps beating when you sneeze; only its rhythm may change briefly.
true: The Eiffel Tower grows about 15 centimetres taller in summer heat.
queries: Eiffel Tower taller in summer heat expansion
fact: Engineers say the iron of the Eiffel Tower expands in summer heat, which can make the
  tower up to 15 centimetres taller.
context: Thermal expansion makes metal structures such as the Eiffel Tower grow in heat and
  shrink in cold, and the tower's height changes with the seasons.
context: On hot days the Eiffel Tower also leans slightly away from the sun, because the side
  facing the sun expands more.
context: The Eiffel Tower is about 330 metres tall with its antennas, and its height in summer
  is a few centimetres more than in winter.
explanation: Yes: the Eiffel Tower's iron expands in the heat, making it up to 15 cm taller.

post: Vikings wore horned helmets into battle, and they reached North America around the year
  1000, long before Columbus.
false: Vikings wore horned helmets into battle.
queries: Viking horned helmets myth
fact: Archaeologists have found no horned helmets from the Viking Age; the image comes from
  nineteenth-century costume designs for operas.
context: The only well-preserved Viking helmet ever found, at Gjermundbu in Norway, is a
  rounded iron cap with no horns.
context: Horns would have been a handicap in battle, historians of Viking warfare say, and
  Vikings did not wear horned helmets.
context: Horned helmets older than the Vikings were used in rituals in the Bronze Age, not in
  battle.
explanation: Vikings did not wear horned helmets; the image comes from 19th-century operas.
true: Vikings reached North America around the year 1000.
queries: Vikings North America year 1000 L'Anse aux Meadows
fact: Excavations at L'Anse aux Meadows in Newfoundland show that Vikings reached North America
  around the year 1000.
context: Tree rings in wood cut by Vikings at L'Anse aux Meadows date the Viking presence in
  North America to the year 1021.
context: The Norse sagas tell of Leif Erikson sailing to a land called Vinland, which Vikings
  reached from Greenland.
context: The Viking site in North America was found in 1960 and is a UNESCO World Heritage
  Site.
explanation: Yes: Vikings reached Newfoundland around the year 1000, long before Columbus.

post: Drinking eight glasses of water a day is a rule set by doctors for everyone.
false: Doctors set a rule that everyone must drink eight glasses of water a day.
queries: eight glasses of water a day rule origin | how much water should you drink daily
fact: No medical body sets a rule of eight glasses of water a day for everyone; health
  authorities say needs vary and much of our water comes from food and other drinks.
context: The eight-glasses advice may trace back to a 1945 recommendation that also said most
  of the water needed is already contained in prepared foods.
context: Kidney specialists say healthy adults can usually rely on thirst to tell them how much
  water to drink.
context: People who exercise hard or live in hot climates need more water than others, doctors
  say, so no single amount fits everyone.
explanation: There is no medical rule of eight glasses a day; water needs vary and food counts.

post: Great news: the Amazon rainforest produces 20 percent of the oxygen we breathe!
false: The Amazon rainforest produces 20 percent of the oxygen people breathe.
queries: Amazon rainforest 20 percent of oxygen claim | Amazon oxygen production net
fact: Scientists say the Amazon's net contribution to the oxygen people breathe is close to
  zero, because the forest uses almost all the oxygen it produces.
context: The plants of the Amazon produce oxygen by photosynthesis, but the forest's animals,
  microbes and decaying leaves consume nearly the same amount.
context: Most of the oxygen in the atmosphere was built up over millions of years, and ocean
  plankton produce a large share of it, climate researchers say.
context: The 20 percent figure spread widely during the Amazon fires of 2019, ecologists who
  study the forest noted.
explanation: The Amazon uses nearly all the oxygen it makes; it does not supply 20 percent of ours.

post: Napoleon was very short, only five foot two, and he was born in Corsica in 1769.
false: Napoleon Bonaparte was unusually short.
queries: was Napoleon short height myth
fact: Napoleon Bonaparte was about 1.69 metres tall, an average height for a Frenchman of his
  time; he was not unusually short.
context: His height was recorded as five foot two in French inches, which were longer than
  English inches, so the figure was misread in Britain.
context: British cartoonists of the Napoleonic wars drew Napoleon as a tiny man, and the image
  stuck, historians say.
context: Napoleon was often seen beside his Imperial Guard, whose soldiers had to be tall,
  which made him look smaller.
explanation: Napoleon was of average height; five foot two was in longer French inches.
true: Napoleon Bonaparte was born in Corsica in 1769.
queries: Napoleon Bonaparte birthplace 1769 Ajaccio Corsica
fact: Napoleon Bonaparte was born on 15 August 1769 in Ajaccio, on the island of Corsica.
context: Corsica had passed from the Republic of Genoa to France in 1768, the year before
  Napoleon was born there.
context: The house in Ajaccio where Napoleon was born in 1769 is now a museum.
context: Napoleon left Corsica for school in mainland France when he was nine years old.
explanation: Yes: Napoleon was born in Ajaccio, Corsica, in August 1769.

post: Three facts: chameleons change colour to blend into their background, ostriches bury
  their heads in the sand when scared, and honey never goes bad.
false: Chameleons change colour mainly to blend into their background.
queries: why do chameleons change colour camouflage myth
fact: Chameleons change colour mainly to signal to other chameleons and to control their body
  temperature, not to match their background, biologists say.
context: A chameleon turns brighter when it meets a rival or courts a mate, studies of
  chameleon behaviour show.
context: Chameleons change colour by adjusting tiny crystals in their skin cells, which alters
  how the skin reflects light.
context: Their resting colours already give chameleons camouflage among leaves, so they need
  not change colour to hide.
explanation: Chameleons change colour mostly to signal and to regulate heat, not to blend in.
false: Ostriches bury their heads in the sand when they are scared.
queries: do ostriches bury their heads in the sand
fact: Ostriches do not bury their heads in the sand; when threatened they run away or lie flat
  on the ground, zoologists say.
context: Ostriches dig shallow nests in the sand and turn their eggs with their beaks, which
  from far away can look like a buried head.
context: An ostrich can run at about 70 kilometres an hour, its usual escape from danger.
context: An ostrich that buried its head in the sand could not breathe, biologists point out.
explanation: Ostriches never bury their heads; they flee or lie flat when threatened.
true: Honey never goes bad if it is stored sealed.
queries: does honey ever spoil sealed jar
fact: Sealed honey keeps for a very long time without spoiling, because its low water content
  and acidity stop bacteria from growing.
context: Archaeologists have found pots of honey in ancient Egyptian tombs that were still
  edible after thousands of years.
context: Honey that absorbs water from the air can ferment, so it should be kept in a closed
  jar, food scientists say.
context: Bees add an enzyme to nectar that makes small amounts of hydrogen peroxide, which also
  helps keep honey from spoiling.
explanation: Yes: sealed honey does not spoil; its chemistry stops bacteria from growing.
"""


def parse_script(script: str) -> tuple[ScriptedPost, ...]:
    """Return the posts a script describes."""
    fields: list[tuple[str, str]] = []
    for line in script.splitlines():
        if line.startswith("  ") and fields:
            key, value = fields.pop()
            fields.append((key, f"{value} {line.strip()}"))
        elif line.strip():
            key, _, value = line.partition(": ")
            fields.append((key, value.strip()))
    posts: list[tuple[str, list[dict[str, list[str]]]]] = []
    for key, value in fields:
        if key == "post":
            posts.append((value, []))
        elif key in ("true", "false"):
            posts[-1][1].append({"text": [value], "accurate": [key]})
        else:
            posts[-1][1][-1].setdefault(key, []).append(value)
    return tuple(
        ScriptedPost(
            text,
            tuple(
                ScriptedClaim(
                    text=c["text"][0],
                    queries=tuple(q.strip() for q in c["queries"][0].split("|")),
                    accurate=c["accurate"][0] == "true",
                    fact=c["fact"][0],
                    context=tuple(c["context"]),
                    explanation=c["explanation"][0],
                )
                for c in claims
            ),
        )
        for text, claims in posts
    )


POSTS = parse_script(_SCRIPT)


# The prompt-length lever of both latency benchmarks: passages a claim keeps (and prompts read).
max_evidence_option = click.option(
    "--max-evidence",
    type=click.IntRange(1, 20),
    default=5,
    show_default=True,
    help="FACTBOT_RETRIEVAL__MAX_EVIDENCE for the run: passages kept per claim.",
)


# The first five posts, translated by hand, for `factbot bench latency-local --language`: a
# check of a non-English post on the local default (issue 40). Their claims are the posts'
# own sentences; the stand-in publishers write English, as cross-language search would find.
TRANSLATED: dict[str, tuple[str, ...]] = {
    "es": (
        "ÚLTIMA HORA: La Gran Muralla China es la única estructura hecha por el hombre que se "
        "puede ver desde la Luna a simple vista. ¡Y se construyó en solo diez años!",
        "Einstein suspendió matemáticas en la escuela y aun así ganó el Premio Nobel por su "
        "teoría de la relatividad. Nacido en Alemania en 1879, ¡demuestra que las notas no "
        "significan nada!",
        "Los peces de colores tienen una memoria de tres segundos y los murciélagos son "
        "completamente ciegos. La naturaleza es increíble.",
        "Un rayo nunca cae dos veces en el mismo sitio, así que los edificios altos están a "
        "salvo en las tormentas. Además, el Everest es la montaña más alta de la Tierra medida "
        "desde la base hasta la cima.",
        "Los humanos solo usamos el 10 por ciento del cerebro. ¡El corazón se detiene cada vez "
        "que estornudas! Y la Torre Eiffel crece unos 15 centímetros con el calor del verano.",
    ),
    "ar": (
        "عاجل: سور الصين العظيم هو البناء الوحيد من صنع الإنسان الذي يمكن رؤيته من القمر "
        "بالعين المجردة. وقد بُني في عشر سنوات فقط!",
        "رسب أينشتاين في الرياضيات في المدرسة ومع ذلك فاز بجائزة نوبل عن نظرية النسبية. وُلد "
        "في ألمانيا عام 1879، وهو دليل على أن الدرجات لا تعني شيئًا!",
        "ذاكرة السمكة الذهبية ثلاث ثوانٍ فقط والخفافيش عمياء تمامًا. الطبيعة مدهشة.",
        "البرق لا يضرب المكان نفسه مرتين، لذلك المباني العالية آمنة في العواصف. كما أن جبل "
        "إيفرست هو أعلى جبل على الأرض إذا قيس من القاعدة إلى القمة.",
        "البشر لا يستخدمون إلا 10 بالمئة من أدمغتهم. قلبك يتوقف في كل مرة تعطس فيها! وبرج "
        "إيفل يزداد طوله نحو 15 سنتيمترًا في حر الصيف.",
    ),
    "zh": (
        "突发：中国长城是唯一能在月球上用肉眼看到的人造建筑。而且它只用了十年就建成了！",
        "爱因斯坦上学时数学不及格，却仍凭相对论获得了诺贝尔奖。他1879年生于德国，"
        "证明了分数毫无意义！",
        "金鱼只有三秒钟的记忆，蝙蝠完全是瞎的。大自然真神奇。",
        "闪电从不会两次击中同一个地方，所以高楼在暴风雨中是安全的。另外，"
        "从山脚到山顶计算，珠穆朗玛峰是地球上最高的山。",
        "人类只用了大脑的10%。每次打喷嚏时你的心脏都会停止跳动！"
        "而且埃菲尔铁塔在夏天的高温下会长高约15厘米。",
    ),
    "hi": (
        "ब्रेकिंग: चीन की महान दीवार इंसान की बनाई एकमात्र संरचना है जिसे चाँद से नंगी आँखों से "
        "देखा जा सकता है। और इसे सिर्फ़ दस साल में बनाया गया था!",
        "आइंस्टीन स्कूल में गणित में फेल हो गए थे और फिर भी सापेक्षता के सिद्धांत के लिए नोबेल "
        "पुरस्कार जीता। 1879 में जर्मनी में जन्मे आइंस्टीन साबित करते हैं कि अंकों का कोई मतलब "
        "नहीं!",
        "सुनहरी मछली की याददाश्त तीन सेकंड की होती है और चमगादड़ पूरी तरह अंधे होते हैं। प्रकृति अद्भुत है।",
        "बिजली एक ही जगह पर दो बार नहीं गिरती, इसलिए ऊँची इमारतें तूफ़ान में सुरक्षित हैं। साथ ही, "
        "आधार से चोटी तक मापें तो माउंट एवरेस्ट धरती का सबसे ऊँचा पर्वत है।",
        "इंसान अपने दिमाग़ का सिर्फ़ 10 प्रतिशत इस्तेमाल करते हैं। हर बार छींकने पर आपका दिल रुक "
        "जाता है! और गर्मी में एफ़िल टॉवर लगभग 15 सेंटीमीटर लंबा हो जाता है।",
    ),
}
