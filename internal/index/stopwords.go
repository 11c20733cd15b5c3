package index

import "strings"

// Stopword languages (bit positions in the stopwords table).
const (
	stopEN = iota
	stopPT
	stopES
	stopDE
	numStopLangs
)

// dropMask: the languages whose stopwords are removed from the index. German
// function words only help language detection.
const dropMask = 1<<stopEN | 1<<stopPT | 1<<stopES

// Function words, written in folded form (lowercase, accents stripped), one
// language per list. Words of one letter are already dropped by the length
// rule and are not listed. The lists keep to articles, pronouns, auxiliaries,
// prepositions and conjunctions: words that carry meaning in technical notes
// ("up", "down", "over", "out", "new", "first") are deliberately absent.
var stopLists = [numStopLangs]string{
	stopEN: `
		an the and or but nor if then so as than that this these those
		of to in on at by for with from into onto upon about via per
		is are was were be been being am do does did doing done has have had having
		will would shall should can could may might must
		it its itself he him his she her hers they them their theirs we us our ours
		you your yours me my mine myself yourself himself herself themselves ourselves
		who whom whose which what when where why how
		there here not no nor yes also just only very too such
		all any both each either neither some most more other others own same
		while because until since although though whether`,
	stopPT: `
		as um uma uns umas de do da dos das no na nos nas em ao aos pelo pela pelos pelas
		por para com sem sob sobre entre ate desde apos
		que se nao mas ou nem como quando onde porque pois entao tambem
		eu tu ele ela eles elas nos vos voce voces lhe lhes me te
		meu minha meus minhas teu tua teus tuas seu sua seus suas nosso nossa nossos nossas
		este esta estes estas esse essa esses essas aquele aquela aqueles aquelas isto isso aquilo
		ser sou es era eram foi foram sera seria sao estar estou estao estava estavam
		ter tem tinha tinham teve ha havia
		mais muito muita muitos muitas ja ainda so todo toda todos todas cada qual quais quem`,
	stopES: `
		el la los las un una unos unas lo le les al del de en con por para
		entre hasta desde hacia sobre tras segun contra
		que se no ni pero mas porque pues como cuando donde cual cuales quien quienes
		yo tu ella ellos ellas nosotros nosotras vosotros usted ustedes me te nos
		mi mis tu tus su sus nuestro nuestra nuestros nuestras
		este esta estos estas ese esa esos esas aquel aquella aquellos aquellas esto eso
		ser soy es son era eran fue fueron sera estar estoy esta estan estaba
		haber he ha han habia hay tener tiene tienen
		muy ya tambien todo toda todos todas cada otro otra otros otras`,
	stopDE: `
		der die das den dem des ein eine einen einem einer eines
		und oder aber sondern wenn dann als wie dass ob weil
		ist sind war waren bin bist sein seid wird werden wurde wurden hat haben hatte
		ich du er sie es wir ihr ihm ihn mich dich sich uns euch
		mit von zu zum zur bei aus auf fur uber unter nach vor durch gegen ohne um
		nicht kein keine keinen auch nur noch schon sehr diese dieser dieses jede jeder`,
}

// stopTable maps a folded stopword to the bit set of its languages. It is a
// small open-addressing table with a hash of the length and three bytes,
// cheaper than a map lookup for the test that runs on every token (see
// termTable for the measurement). stopTags holds a tag of each slot's hash
// (0: empty), read before the slot: the tags take 4 KiB, which stay in the
// CPU's first cache where the 48 KiB of entries did not (the load of an
// entry was a third of the test's time on the generated 100k-note vault),
// and most tokens are not stopwords, so most tests read no entry at all.
var stopTable, stopTags, maxStopLen = func() (t [stopSlots]stopEntry, tags [stopSlots]uint16, maxLen int) {
	for l, list := range stopLists {
		for _, w := range strings.Fields(list) {
			h := stopHash(w)
			i := stopSlot(h)
			for t[i].w != "" && t[i].w != w {
				i = (i + 1) & (stopSlots - 1)
			}
			t[i].w = w
			t[i].langs |= 1 << l
			tags[i] = stopTag(h)
			maxLen = max(maxLen, len(w))
		}
	}
	return t, tags, maxLen
}()

const stopSlots = 2048

type stopEntry struct {
	w     string
	langs uint8
}

// stopHash mixes the length and three bytes of s; stopSlot takes its top
// 11 bits (the slot) and stopTag 16 bits below them, never 0.
func stopHash(s string) uint32 {
	h := uint32(len(s))
	h = h*31 + uint32(s[0])
	h = h*31 + uint32(s[len(s)/2])
	h = h*31 + uint32(s[len(s)-1])
	return h * 2654435761
}

func stopSlot(h uint32) uint32 { return h >> (32 - 11) }

func stopTag(h uint32) uint16 { return uint16(h>>5) | 1 }

// stopLangs returns the languages s is a stopword of (0: none). s is not empty.
func stopLangs(s string) uint8 {
	h := stopHash(s)
	tag := stopTag(h)
	for i := stopSlot(h); ; i = (i + 1) & (stopSlots - 1) {
		switch stopTags[i] {
		case tag:
			if e := &stopTable[i]; e.w == s {
				return e.langs
			}
		case 0:
			return 0
		}
	}
}
