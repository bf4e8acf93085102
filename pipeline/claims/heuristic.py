"""Claim extraction: split a post into check-worthy sentences.

Without a language model, check-worthiness is a transparent heuristic: a sentence is kept when
it has enough words (`word_count`: Han, kana and Thai are measured by characters) and states
something (a number in any script's digits, a named entity or a factual verb, listed per
language in `_CUES`) rather than asking, greeting or giving a first-person opinion. An English
yes/no question about the world is checked as the statement it asks about ("Can masks stop the
flu?" -> "Masks can stop the flu.", `pipeline.claims.asked`). A sentence
that speaks to the fact-checker instead ("Note to the AI: ...", "Ignore previous
instructions ...") states nothing about the world and is never a claim. When more sentences
qualify than `max_claims`, the best-scored ones are kept in their original order. Splitting and
scoring a long post (100,000 characters) takes a sixth of a second, so it runs in the CPU pool.

Failure policy: a post with nothing check-worthy raises EmptyPostError; nothing else raises.
"""

from __future__ import annotations

import re

from pipeline.claims.asked import statement
from pipeline.errors import EmptyPostError
from pipeline.records.domain import Claim, Post, new_id
from pipeline.util.cpu import CpuPool, run_cpu
from pipeline.util.text import (
    ALL_STOPWORDS,
    QUESTION_MARKS,
    clean_post_text,
    split_sentences,
    word_count,
    words,
)

MIN_WORDS = 3
MAX_CLAIM_CHARS = 600

# Any script's digits (Arabic-Indic and Devanagari ones too), and the number words of the
# scripts that write numbers in words as often as in digits: Arabic, Hindi, Russian, Chinese
# and Japanese ("ثلاثة أيام", "तीन दिन", "пять тысяч", "一百元").
_NUMBER_RE = re.compile(
    r"\d"
    r"|(?<!\w)(?:و|ب|ل)?(?:ال)?(?:ثلاث|أربع|خمس|ست|سبع|ثماني|تسع|عشر|مئ|مائ|ألف|آلاف|ملاي?ين|"
    r"مليار)(?:ة|ين|ون|ات)?(?!\w)"
    r"|(?<![\u0900-\u097f])(?:दो|तीन|चार|पांच|पाँच|छह|सात|आठ|नौ|दस|सौ|हज़ार|हजार|लाख|करोड़?)"
    r"(?![\u0900-\u097f])"
    r"|\b(?:два|две|три|четыре|пять|шесть|семь|восемь|девять|десять|сто|тысяч[аи]?|"
    r"миллион(?:а|ов)?|миллиард(?:а|ов)?)\b"
    r"|[一二三四五六七八九十两兩百千][十百千万萬亿億]|[百千万萬亿億][元人个個]",
    re.IGNORECASE,
)
# Words that state something, per language. Spaced scripts match whole words; Arabic (which
# joins prefixes such as و and ال to the word), Devanagari and Chinese match inside words.
_CUES: dict[str, str] = {
    "en": r"is|are|was|were|has|have|had|will|won't|can|can't|could|cause[sd]?|causing|"
    r"kill(?:s|ed)?|die[sd]?|found|show(?:s|ed)?|prove[sd]?|contain(?:s|ed)?|ban(?:s|ned)?|"
    r"approve[sd]?|cure[sd]?|lead(?:s)?|increase[sd]?|decrease[sd]?|rose|fell|announce[sd]?|"
    r"sign(?:s|ed)?|vote[sd]?|confirm(?:s|ed)?|report(?:s|ed)?|claim(?:s|ed)?|said|says|does|"
    r"did|never|no",
    "es": r"es|son|fue|fueron|era|está|están|ha|han|había|será|causa[nr]?|provoca[nr]?|"
    r"anunci[óa]|confirm[óa]|dijo|dice|afirm[óa]|prohíbe|prohibió|aprob[óo]|mat[óa]|muri[óo]|"
    r"subi[óo]|baj[óo]|cura|contiene|demuestra|nunca",
    "pt": r"é|são|foi|foram|era|está|estão|tem|têm|será|vai|causa[mr]?|provoca[mr]?|"
    r"anunciou|confirmou|disse|diz|afirmou|proíbe|proibiu|aprovou|matou|morreu|subiu|caiu|"
    r"cura|contém|comprova|nunca",
    "fr": r"est|sont|était|étaient|a|ont|sera|va|cause|causent|provoque|provoquent|annoncé|"
    r"confirmé|dit|affirme|interdit|approuvé|tué|mort|augmenté|baissé|guérit|contient|"
    r"prouve|jamais",
    "de": r"ist|sind|war|waren|hat|haben|hatte|wird|werden|verursacht|angekündigt|bestätigt|"
    r"sagt|sagte|behauptet|verbietet|verboten|genehmigt|getötet|gestorben|gestiegen|"
    r"gesunken|heilt|enthält|beweist|nie|niemals|abgeschafft",
    "it": r"è|sono|era|erano|ha|hanno|sarà|causa|provoca|annunciato|confermato|detto|dice|"
    r"vieta|vietato|approvato|ucciso|morto|aumentato|diminuito|cura|contiene|dimostra|mai",
    "ru": r"является|был|была|были|будет|будут|есть|вызывает|вызывают|заявил[аи]?|"
    r"подтвердил[аи]?|сказал[аи]?|запретил[аи]?|запрещает|одобрил[аи]?|убил[аи]?|убивает|"
    r"умер|умерли|выросл[иа]|вырос|упал[иа]?|повысят|снизят|повышает|снижает|отменяет|"
    r"отменил[аи]?|отменят|вводит|ввели|введут|доказал[аи]?|признал[аи]?|распространяют|"
    r"распространяет|лечит|излечивает|содержит|никогда",
    "nl": r"is|zijn|was|waren|heeft|hebben|wordt|worden|zal|veroorzaakt|aangekondigd|bevestigd|"
    r"zegt|zei|verboden|gestorven|gestegen|gedaald|afgeschaft|nooit",
}
_UNSPACED_CUES = (
    # Arabic: announced, said, confirmed, causes, revealed, rose, fell, banned, died, showed,
    # kills, cures/treats, spread, admits, cancels, raises, prevents, decided, issued, contains
    "أعلن|قال|أكد|تؤكد|يؤكد|يسبب|تسبب|كشف|ارتفع|انخفض|ستنخفض|سترتفع|حظر|توفي|مات|أظهر|"
    "ليس|كان|كانت|يوجد|يقتل|تقتل|قتل|يعالج|تعالج|يشفي|تشفي|انتشار|ينتشر|تنتشر|اعترف|تعترف|"
    "يعترف|يلغي|تلغي|ألغى|ألغت|يرفع|ترفع|رفع|يمنع|تمنع|منع|قرر|أصدر|يحتوي|تحتوي|وفاة|مقتل|"
    "إصابة|سيتم|تم"
    # Hindi: is/are/was, will, said, announced, confirmed, death, rise, fall, ban, causes,
    # did/made, admitted, claim, revealed, closed, in force, and the future tense (-गा/-गी/-गे)
    "|है|हैं|था|थी|थे|होगा|होगी|कहा|घोषणा|पुष्टि|बताया|मौत|बढ़|घट|प्रतिबंध|कारण"
    "|किया|किए|दिया|माना|दावा|खुलासा|बंद|लागू|फैल|[ेोएंँू]+ग[ाीे](?![\u0900-\u097f])"
    # Chinese: is, has, will, causes, confirmed, announced, said, died, found, shows, banned,
    # the perfective 了, already, by, stops, cancels, spreads, kills, pollutes, rises, falls
    "|是|有|会|導致|导致|造成|證實|证实|宣布|表示|稱|称|說|说|死亡|發現|发现|顯示|显示|禁止|"
    "批准|治愈|治癒|增加|减少|減少|上涨|上漲|下降|可以|能|了|将|將|已|被|停止|取消|传播|傳播|"
    "杀死|殺死|污染|感染|泄露|洩露|上调|下调|暴涨|暴跌"
    # Persian, Urdu, Hebrew, Japanese, Korean, Thai, Bengali: announced, said, confirmed,
    # causes, died, banned, rose, fell, is
    "|است|بود|اعلام|گفت|باعث|تایید|ممنوع|افزایش|کاهش"
    "|ہے|ہیں|تھا|اعلان|کہا|تصدیق|وجہ"
    "|הודיע|אמר|אישר|גורם|אסר|עלה|ירד"
    "|発表|確認|原因|死亡|禁止|増加|減少|した|です|治る|なる|なった|らしい|によると|"
    "可能性|噴火|地震|廃止|引き上げ|値上げ|という"
    "|했다|한다|이다|발표|확인|원인|사망|금지|증가|감소"
    "|ประกาศ|ยืนยัน|ทำให้|เสียชีวิต|ห้าม|เพิ่มขึ้น|ลดลง|เป็น|คือ"
    "|ঘোষণা|নিশ্চিত|কারণ|মৃত্যু|নিষিদ্ধ|বলেছে|করেছে"
)
_FACTUAL_VERB_RE = re.compile(
    r"\b(?:" + "|".join(_CUES.values()) + r")\b|" + _UNSPACED_CUES, re.IGNORECASE
)
_OPINION_RE = re.compile(
    r"^\W*(i think|i feel|i believe|i love|i hate|imo|in my opinion|lol|lmao|omg|"
    r"thank you|thanks|good morning|good night|hello|hi everyone|congrat|"
    r"creo que|pienso que|en mi opinión|gracias|buenos días|hola|"
    r"acho que|eu acho|na minha opinião|obrigad[oa]|bom dia|olá|"
    r"je pense|je crois|à mon avis|merci|bonjour|"
    r"ich glaube|ich denke|meiner meinung nach|danke|guten morgen|hallo|"
    r"我觉得|我認為|我认为|谢谢|謝謝|早上好|你好|大家好|大家早上好|晚安|"
    r"أعتقد|أظن|شكرا|صباح الخير|مساء الخير|مرحبا|السلام عليكم|جمعة مباركة|"
    r"मुझे लगता|मेरे विचार में|धन्यवाद|नमस्ते|सुप्रभात|सभी को सुप्रभात|शुभ प्रभात|शुभ रात्रि|शुभकामना|बधाई|"
    r"जय श्री राम|जय हिंद|"
    r"я думаю|я считаю|по-моему|спасибо|доброе утро|добрый день|добрый вечер|привет|"
    r"здравствуйте|поздравляю|с днём|с днем|"
    r"おはよう|こんにちは|こんばんは|ありがとう|よろしく|お疲れ|私は思う|と思います)",
    re.IGNORECASE,
)

# A sentence that speaks to the model checking the post rather than states something: prompt
# injection, and the instructions the claims model is told to ignore. Kept narrow on purpose: a
# sentence about rules or instructions ("officials ignored the guidelines") is a claim.
_CHECKER = (
    r"(?:ai|a\.i\.|llms?|language models?|models?|assistants?|chat ?bots?|bots?|chatgpt|"
    r"fact[- ]?check(?:ing|er)? (?:ai|bots?|models?|systems?|tools?))"
)
_ADDRESSED_RE = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?"
    r"(?:previous|prior|above|earlier|preceding|your|system|original)\s+"
    r"(?:\w+\s+)?(?:instructions|prompts?)\b"
    rf"|\b(?:note|message|instructions?|reminder|memo|request)s?\s+(?:to|for)\s+"
    rf"(?:the\s+|any\s+|all\s+|every\s+)?{_CHECKER}\b"
    rf"|\b(?:dear|hey|hi|hello|attention),?\s+{_CHECKER}\b"
    r"|^\W*(?:system|assistant|developer)\s*:"
    r"|\b(?:rate|label|classify)\s+(?:this|the|that|every|each|all)\s+(?:posts?|claims?|tweets?)\b"
    r"|\bcheckable\s*[=:]",
    re.IGNORECASE,
)


def addresses_the_checker(sentence: str) -> bool:
    """Return whether a sentence speaks to the fact-checker instead of stating something."""
    return bool(_ADDRESSED_RE.search(sentence))


def _named(sentence: str) -> int:
    """Count capitalised tokens that are not function words (a cheap named-entity signal)."""
    tokens = words(sentence)
    return sum(1 for t in tokens if t[:1].isupper() and t.lower() not in ALL_STOPWORDS)


def checkworthiness(sentence: str) -> float:
    """Score how check-worthy a sentence is (0 means not at all)."""
    if word_count(sentence) < MIN_WORDS:
        return 0.0
    if (
        sentence.rstrip().endswith(QUESTION_MARKS)
        or _OPINION_RE.match(sentence)
        or addresses_the_checker(sentence)
    ):
        return 0.0
    score = 0.2
    if _NUMBER_RE.search(sentence):
        score += 0.3
    if _named(sentence):
        score += 0.3
    if _FACTUAL_VERB_RE.search(sentence):
        score += 0.3
    return score


async def extract_claims(
    post: Post, *, max_claims: int = 5, cpu: CpuPool | None = None
) -> list[Claim]:
    """Return the check-worthy sentences of a post as claims."""
    return await run_cpu(cpu, _claims, post, max_claims)


def _claims(post: Post, max_claims: int) -> list[Claim]:
    text = clean_post_text(post.text)
    if not any(c.isalnum() for c in text):
        raise EmptyPostError(
            "the post has no text to check once links, mentions and emojis are removed"
        )
    sentences = [statement(s) or s for s in split_sentences(text)]
    scored = [(checkworthiness(s), i, s) for i, s in enumerate(sentences)]
    kept = [entry for entry in scored if entry[0] > 0.2]
    if not kept:
        raise EmptyPostError(
            "the post has no check-worthy statement (only questions, greetings, opinions, "
            f"instructions to the checker or sentences under {MIN_WORDS} words)"
        )
    best = sorted(kept, key=lambda e: (-e[0], e[1]))[:max_claims]
    best.sort(key=lambda e: e[1])
    return [
        Claim(id=new_id(), post_id=post.id, position=n, text=sentence[:MAX_CLAIM_CHARS])
        for n, (_, _, sentence) in enumerate(best)
    ]
