package vault

import "github.com/vaultmcp/vaultmcp/internal/msgcat"

// msgID names one of the vault's own texts: the warnings of a write and
// the messages of its refusals, which reach the agent as tool output, in
// the language of Options.Lang (VAULT_LANG: "en", the default, or "pt"),
// as the rest of the tool output does. What the layers below say (the
// gatekeeper's refusals, git's and the file system's errors) stays as they
// say it, inside these texts.
type msgID string

// texts are the vault's texts in one language.
type texts = msgcat.Texts[msgID]

const (
	// Warnings of a write.
	wMOCList         msgID = "warn.moc_list"
	wDailyLog        msgID = "warn.daily_log"
	wCandidateFailed msgID = "warn.candidate_failed"
	wNotANote        msgID = "warn.not_a_note"
	wNameTakenNew    msgID = "warn.name_taken_new"
	wUnreadable      msgID = "warn.unreadable"
	wNameTakenAppend msgID = "warn.name_taken_append"
	wNameTakenFailed msgID = "warn.name_taken_failed"
	wAppeared        msgID = "warn.appeared"
	wWriteFailed     msgID = "warn.write_failed"
	wAlreadyHeld     msgID = "warn.already_held"
	wUnchanged       msgID = "warn.unchanged"
	wNoNoteYet       msgID = "warn.no_note_yet"
	wFMNotKept       msgID = "warn.frontmatter_not_kept"
	wFMInvalid       msgID = "warn.frontmatter_invalid"
	wTemplateDropped msgID = "warn.template_dropped"
	wTemplateUnread  msgID = "warn.template_unreadable"
	wIndexList       msgID = "warn.index_list"
	wOwnLinks        msgID = "warn.own_links"
	wUpdateFailed    msgID = "warn.update_failed"
	wMOCFailed       msgID = "warn.moc_failed"
	wBrokenLinks     msgID = "warn.broken_links"
	wThroughLink     msgID = "warn.through_link"
	wStuck           msgID = "warn.stuck"
	wNoGit           msgID = "warn.no_git"
	wNothingToCommit msgID = "warn.nothing_to_commit"
	wCommitFailed    msgID = "warn.commit_failed"
	wKeptLocal       msgID = "warn.kept_local"
	wPushFailed      msgID = "warn.push_failed"
	wPushNoUpstream  msgID = "warn.push_no_upstream"
	wPushRejected    msgID = "warn.push_rejected"
	wPushAuth        msgID = "warn.push_auth"
	wPushNetwork     msgID = "warn.push_network"

	// Refusals and failures.
	eReadOnly       msgID = "error.read_only"
	eFirstDomain    msgID = "error.first_domain"
	eNewDomainLearn msgID = "error.new_domain_learn"
	eNewDomainMove  msgID = "error.new_domain_move"
	eNotRecorded    msgID = "error.not_recorded"
	eMoveReadOnly   msgID = "error.move_read_only"
	eMoveExists     msgID = "error.move_exists"
	eMoveLinks      msgID = "error.move_links"
	eNotIndexed     msgID = "error.not_indexed"
	eNotFoundNear   msgID = "error.not_found_near"
	eLockFailed     msgID = "error.lock_failed"
	eShuttingDown   msgID = "error.shutting_down"
	eCancelled      msgID = "error.cancelled"
	eKeptChanging   msgID = "error.kept_changing"
	eStillIndexing  msgID = "error.still_indexing"
	eIndexFailed    msgID = "error.index_failed"
	eExists         msgID = "error.exists"
	eChanged        msgID = "error.changed"
	eSameName       msgID = "error.same_name"
	eGone           msgID = "error.gone"
	eNoMatch        msgID = "error.no_match"
	eNotUnique      msgID = "error.not_unique"
	eStructural     msgID = "error.structural"
	eIsIndex        msgID = "error.is_index"
	eIsMOC          msgID = "error.is_moc"
	eIsDaily        msgID = "error.is_daily"
	eDeleteNoGit    msgID = "error.delete_no_git"
	eUncommitted    msgID = "error.uncommitted"
	eLinkedTo       msgID = "error.linked_to"
	eAndMore        msgID = "error.and_more"
	eNoGit          msgID = "error.no_git"
	eNotACommit     msgID = "error.not_a_commit"
	eNotOurs        msgID = "error.not_ours"
	eUndoConflict   msgID = "error.undo_conflict"
	eAlreadyUndone  msgID = "error.already_undone"
	eFMNotYAML      msgID = "error.frontmatter_not_yaml"
	eFMEmptyKey     msgID = "error.frontmatter_empty_key"
	eSamePath       msgID = "error.same_path"
	eNUL            msgID = "error.nul"
	eCommitID       msgID = "error.commit_id"
	eOffsetMin      msgID = "error.offset_min"
	eOffsetPast     msgID = "error.offset_past"
	eMoveFolder     msgID = "error.move_folder"
	eNoNoteUnder    msgID = "error.no_note_under"
	eNoNoteUnderAs  msgID = "error.no_note_under_near"

	// What is wrong with a field of vault_learn.
	vEmpty        msgID = "invalid.empty"
	vTitleLetter  msgID = "invalid.title_letter"
	vMaxTags      msgID = "invalid.max_tags"
	vEmptyTag     msgID = "invalid.empty_tag"
	vTagWord      msgID = "invalid.tag_word"
	vTagDigits    msgID = "invalid.tag_digits"
	vMaxLinks     msgID = "invalid.max_links"
	vEmptyLink    msgID = "invalid.empty_link"
	vLinkName     msgID = "invalid.link_name"
	vUTF8         msgID = "invalid.utf8"
	vControlLine  msgID = "invalid.control_line"
	vControl      msgID = "invalid.control"
	vMaxChars     msgID = "invalid.max_chars"
	vDomainSpaces msgID = "invalid.domain_spaces"
	vDomainChars  msgID = "invalid.domain_chars"
	vDomainDot    msgID = "invalid.domain_dot"
)

var catalogue = msgcat.Catalogue[msgID]{
	"en": {
		wMOCList:         "could not list the note in %s: %s",
		wDailyLog:        "could not log the capture in %s: %s",
		wCandidateFailed: "%s could not be written (%s); the insight went to a new note, %s",
		wNotANote:        "%s is taken by something that is not a note (%s); the insight went to a new note, %s",
		wNameTakenNew:    "a note named %s already exists (%s); the new note is %s, so that the links to [[%s]] keep their target",
		wUnreadable:      "%s could not be read (%s); the insight went to a new note, %s",
		wNameTakenAppend: "a note named %s already exists (%s); the insight was appended to it",
		wNameTakenFailed: "a note named %s already exists (%s) but could not be written (%s); the insight went to a new note, %s",
		wAppeared:        "%s appeared while the note was being written; the insight went to a new note, %s",
		wWriteFailed:     "%s could not be written (%s); the insight went to a new note, %s",
		wAlreadyHeld:     "%s already holds this insight; it was not added again",
		wUnchanged:       "%s already reads so: nothing was written",
		wNoNoteYet:       "no note exists yet for %s",
		wFMNotKept:       "the frontmatter of %s could not be kept: %s",
		wFMInvalid:       "the frontmatter of %s is not valid YAML once filled; the new note has its own",
		wTemplateDropped: "%s has template expressions that vaultmcp cannot fill; they were left out of the new note: %s",
		wTemplateUnread:  "the template %s could not be read (%s); it was not used",
		wIndexList:       "could not list the new domain in %s: %s",
		wOwnLinks:        "the moved note's own links were not updated: %s",
		wUpdateFailed:    "could not update %s: %s",
		wMOCFailed:       "could not update the map of content: %s",
		wBrokenLinks:     "%d note(s) now have a broken link to %s",
		wThroughLink:     "%s goes through a symbolic link; the write names the note it leads to, %s",
		wStuck:           "a previous write was stuck for over %s; exclusivity of this write was not guaranteed",
		wNoGit:           "the vault is not a git repository: the change was written but not committed",
		wNothingToCommit: "git had nothing to commit",
		wCommitFailed:    "the change was written but the commit failed: %s",
		wKeptLocal:       "%d file(s) held changes that were not committed (%s); they were committed first, as they were, in %s, so that undoing this write gives them back",
		wPushFailed:      "push failed: %s",
		wPushNoUpstream:  "the branch has no upstream (set one with git push -u)",
		wPushRejected:    "the remote is ahead; pull and push by hand (vaultmcp never pulls or merges)",
		wPushAuth:        "authentication failed (vaultmcp never prompts; configure a credential helper or an SSH key)",
		wPushNetwork:     "the remote could not be reached",

		eReadOnly:       "the vault is open read-only",
		eFirstDomain:    "%q would be a new domain (no domain exists yet); pass confirm_new_domain: true to create the vault's first one",
		eNewDomainLearn: "%q would be a new domain (existing: %s); file the learning under one of those, or pass confirm_new_domain: true to create it",
		eNewDomainMove:  "%q would be a new domain (existing: %s); pass confirm_new_domain: true to create it",
		eNotRecorded:    "the insight could not be written under %s (%s); nothing was recorded",
		eMoveReadOnly:   "%s is read-only (mode %04o); it is not moved",
		eMoveExists:     "%s already exists; a move never overwrites a note",
		eMoveLinks:      "the links to %s cannot all be updated, so nothing was moved: %s",
		eNotIndexed:     "%q is not an indexed note",
		eNotFoundNear:   "%s; did you mean %s?",
		eNoNoteUnder:    "no note lies under %q",
		eNoNoteUnderAs:  "no note lies under %q (did you mean %s?)",
		eLockFailed:     "could not take the write lock, nothing was written: %s",
		eShuttingDown:   "the server is shutting down; nothing was written",
		eCancelled:      "the write was cancelled before anything was changed",
		eKeptChanging:   "notes kept changing while the write was planned (%d tries); nothing was changed: %s",
		eStillIndexing:  "the vault is still being indexed",
		eIndexFailed:    "indexing failed: %s",
		eExists:         "%s exists; to replace it pass expected_sha256 of its current content (%s), or edit it with vault_edit_note",
		eChanged:        "%s changed since you read it: its current SHA-256 is %s; read it again before replacing it",
		eGone:           "%s does not exist (deleted or moved since you read it?); leave expected_sha256 out to create it",
		eSameName:       "%s would be a second name for %s (they differ only in letter case or Unicode normalisation, one file on macOS and Windows); edit that note or choose another name",
		eNoMatch:        "not found in %s (read the note again with vault_get_note: the text must match exactly)",
		eNotUnique:      "occurs %d times in %s; include more surrounding text so it occurs once",
		eStructural:     "%s cannot be deleted: %s",
		eIsIndex:        "it is the knowledge index",
		eIsMOC:          "it is a map of content",
		eIsDaily:        "it is a daily note",
		eDeleteNoGit:    "%s cannot be deleted: the vault is not a git repository, so the deletion could not be undone",
		eUncommitted:    "%s has changes that are not committed; deleting it would lose them for good (commit it first)",
		eLinkedTo:       "%d note(s) link to %s (%s%s); their links would break. Pass confirm: true to delete anyway",
		eAndMore:        " and %d more",
		eNoGit:          "the vault is not a git repository",
		eNotACommit:     "%s is not a commit of this repository",
		eNotOurs:        "%s was not made by vaultmcp; revert it with git yourself",
		eUndoConflict:   "undoing %s conflicts with later changes of %s; nothing was changed",
		eAlreadyUndone:  "%s is already undone: the notes it changed are as they were before it",
		eFMNotYAML:      "the frontmatter block is not valid YAML%s",
		eFMEmptyKey:     "keys must not be empty",
		eSamePath:       "is the same path as from",
		eNUL:            "must not contain a NUL character (U+0000): a note is text, and git would take it for a binary file",
		eCommitID:       "must be a commit id of 4 to 64 hex digits, as a write's answer or vault_history shows it",
		eOffsetMin:      "must be 0 or more",
		eOffsetPast:     "%d is past the end of the note (%d characters)",
		eMoveFolder:     "%s is a folder; vault_move moves one note at a time: give a note's path (ending in .md) and move the folder's notes one by one",

		vEmpty:        "must not be empty",
		vTitleLetter:  "must contain a letter or digit to name the note",
		vMaxTags:      "at most %d tags",
		vEmptyTag:     "must not contain an empty tag",
		vTagWord:      "%q: a tag is one word, without spaces or any of %s",
		vTagDigits:    "%q: a tag needs a character other than a digit (Obsidian does not take #2026 for a tag; y2026 is one)",
		vMaxLinks:     "at most %d links",
		vEmptyLink:    "must not contain an empty link",
		vLinkName:     "%q: give each link as a note name, e.g. retry-backoff",
		vUTF8:         "must be valid UTF-8",
		vControlLine:  "must not contain control or invisible formatting characters",
		vControl:      "must not contain control characters",
		vMaxChars:     "must be at most %d characters",
		vDomainSpaces: "must be one folder name without spaces, e.g. go or devops",
		vDomainChars:  `must be one folder name, without / \ : * ? " < > |`,
		vDomainDot:    "must not start or end with a dot",
	},
	"pt": {
		wMOCList:         "não foi possível listar a nota em %s: %s",
		wDailyLog:        "não foi possível registrar a captura em %s: %s",
		wCandidateFailed: "%s não pôde ser escrita (%s); o aprendizado foi para uma nota nova, %s",
		wNotANote:        "%s está ocupado por algo que não é uma nota (%s); o aprendizado foi para uma nota nova, %s",
		wNameTakenNew:    "já existe uma nota chamada %s (%s); a nota nova é %s, para que os links para [[%s]] mantenham o destino",
		wUnreadable:      "%s não pôde ser lida (%s); o aprendizado foi para uma nota nova, %s",
		wNameTakenAppend: "já existe uma nota chamada %s (%s); o aprendizado foi acrescentado a ela",
		wNameTakenFailed: "já existe uma nota chamada %s (%s), mas ela não pôde ser escrita (%s); o aprendizado foi para uma nota nova, %s",
		wAppeared:        "%s surgiu enquanto a nota era escrita; o aprendizado foi para uma nota nova, %s",
		wWriteFailed:     "%s não pôde ser escrita (%s); o aprendizado foi para uma nota nova, %s",
		wAlreadyHeld:     "%s já contém este aprendizado; ele não foi acrescentado de novo",
		wUnchanged:       "%s já está assim: nada foi escrito",
		wNoNoteYet:       "ainda não existe nota para %s",
		wFMNotKept:       "o frontmatter de %s não pôde ser mantido: %s",
		wFMInvalid:       "o frontmatter de %s não é YAML válido depois de preenchido; a nota nova tem o seu próprio",
		wTemplateDropped: "%s tem expressões de template que o vaultmcp não sabe preencher; elas ficaram fora da nota nova: %s",
		wTemplateUnread:  "o template %s não pôde ser lido (%s); ele não foi usado",
		wIndexList:       "não foi possível listar o novo domínio em %s: %s",
		wOwnLinks:        "os links da própria nota movida não foram atualizados: %s",
		wUpdateFailed:    "não foi possível atualizar %s: %s",
		wMOCFailed:       "não foi possível atualizar o mapa de conteúdo: %s",
		wBrokenLinks:     "%d nota(s) agora têm um link quebrado para %s",
		wThroughLink:     "%s passa por um link simbólico; a escrita nomeia a nota a que ele leva, %s",
		wStuck:           "uma escrita anterior ficou travada por mais de %s; a exclusividade desta escrita não foi garantida",
		wNoGit:           "o cofre não é um repositório git: a alteração foi escrita, mas não foi registrada em commit",
		wNothingToCommit: "o git não tinha nada para registrar em commit",
		wCommitFailed:    "a alteração foi escrita, mas o commit falhou: %s",
		wKeptLocal:       "%d arquivo(s) tinham alterações sem commit (%s); elas foram registradas antes, como estavam, em %s, para que desfazer esta escrita as devolva",
		wPushFailed:      "o push falhou: %s",
		wPushNoUpstream:  "o branch não tem upstream (defina um com git push -u)",
		wPushRejected:    "o remoto está à frente; faça pull e push à mão (o vaultmcp nunca faz pull nem merge)",
		wPushAuth:        "a autenticação falhou (o vaultmcp nunca pede senha; configure um credential helper ou uma chave SSH)",
		wPushNetwork:     "o remoto não pôde ser alcançado",

		eReadOnly:       "o cofre está aberto só para leitura",
		eFirstDomain:    "%q seria um domínio novo (ainda não há nenhum); passe confirm_new_domain: true para criar o primeiro do cofre",
		eNewDomainLearn: "%q seria um domínio novo (existentes: %s); registre o aprendizado num deles, ou passe confirm_new_domain: true para criá-lo",
		eNewDomainMove:  "%q seria um domínio novo (existentes: %s); passe confirm_new_domain: true para criá-lo",
		eNotRecorded:    "o aprendizado não pôde ser escrito em %s (%s); nada foi registrado",
		eMoveReadOnly:   "%s é só para leitura (modo %04o); ela não é movida",
		eMoveExists:     "%s já existe; mover nunca sobrescreve uma nota",
		eMoveLinks:      "os links para %s não podem ser todos atualizados, então nada foi movido: %s",
		eNotIndexed:     "%q não é uma nota indexada",
		eNotFoundNear:   "%s; você quis dizer %s?",
		eNoNoteUnder:    "nenhuma nota está em %q",
		eNoNoteUnderAs:  "nenhuma nota está em %q (você quis dizer %s?)",
		eLockFailed:     "não foi possível obter a trava de escrita, nada foi escrito: %s",
		eShuttingDown:   "o servidor está sendo encerrado; nada foi escrito",
		eCancelled:      "a escrita foi cancelada antes de qualquer alteração",
		eKeptChanging:   "as notas continuaram mudando enquanto a escrita era planejada (%d tentativas); nada foi alterado: %s",
		eStillIndexing:  "o cofre ainda está sendo indexado",
		eIndexFailed:    "a indexação falhou: %s",
		eExists:         "%s existe; para substituí-la passe expected_sha256 do conteúdo atual (%s), ou edite-a com vault_edit_note",
		eChanged:        "%s mudou desde que você a leu: o SHA-256 atual é %s; leia-a de novo antes de substituí-la",
		eGone:           "%s não existe (apagada ou movida desde que você a leu?); omita expected_sha256 para criá-la",
		eSameName:       "%s seria um segundo nome para %s (diferem só em maiúsculas/minúsculas ou normalização Unicode, um só arquivo no macOS e no Windows); edite essa nota ou escolha outro nome",
		eNoMatch:        "não encontrado em %s (leia a nota de novo com vault_get_note: o texto precisa coincidir exatamente)",
		eNotUnique:      "ocorre %d vezes em %s; inclua mais texto em volta para que ocorra uma só vez",
		eStructural:     "%s não pode ser apagada: %s",
		eIsIndex:        "é o índice do conhecimento",
		eIsMOC:          "é um mapa de conteúdo",
		eIsDaily:        "é uma nota diária",
		eDeleteNoGit:    "%s não pode ser apagada: o cofre não é um repositório git, então a remoção não poderia ser desfeita",
		eUncommitted:    "%s tem alterações sem commit; apagá-la as perderia para sempre (faça o commit antes)",
		eLinkedTo:       "%d nota(s) têm link para %s (%s%s); esses links quebrariam. Passe confirm: true para apagar mesmo assim",
		eAndMore:        " e mais %d",
		eNoGit:          "o cofre não é um repositório git",
		eNotACommit:     "%s não é um commit deste repositório",
		eNotOurs:        "%s não foi feito pelo vaultmcp; reverta-o você mesmo com o git",
		eUndoConflict:   "desfazer %s conflita com alterações posteriores de %s; nada foi alterado",
		eAlreadyUndone:  "%s já foi desfeito: as notas que ele alterou estão como eram antes dele",
		eFMNotYAML:      "o bloco de frontmatter não é YAML válido%s",
		eFMEmptyKey:     "as chaves não podem ser vazias",
		eSamePath:       "é o mesmo caminho que from",
		eNUL:            "não pode conter o caractere NUL (U+0000): uma nota é texto, e o git a tomaria por um arquivo binário",
		eCommitID:       "precisa ser o id de um commit, de 4 a 64 dígitos hexadecimais, como a resposta de uma escrita ou vault_history o mostra",
		eOffsetMin:      "precisa ser 0 ou mais",
		eOffsetPast:     "%d passa do fim da nota (%d caracteres)",
		eMoveFolder:     "%s é uma pasta; vault_move move uma nota por vez: dê o caminho de uma nota (terminado em .md) e mova as notas da pasta uma a uma",

		vEmpty:        "não pode ser vazio",
		vTitleLetter:  "precisa conter uma letra ou um dígito para dar nome à nota",
		vMaxTags:      "no máximo %d tags",
		vEmptyTag:     "não pode conter uma tag vazia",
		vTagWord:      "%q: uma tag é uma palavra só, sem espaços nem nenhum de %s",
		vTagDigits:    "%q: uma tag precisa de um caractere que não seja dígito (o Obsidian não toma #2026 por tag; a2026 é uma)",
		vMaxLinks:     "no máximo %d links",
		vEmptyLink:    "não pode conter um link vazio",
		vLinkName:     "%q: dê cada link como nome de nota, p. ex. retry-backoff",
		vUTF8:         "precisa ser UTF-8 válido",
		vControlLine:  "não pode conter caracteres de controle ou de formatação invisíveis",
		vControl:      "não pode conter caracteres de controle",
		vMaxChars:     "pode ter no máximo %d caracteres",
		vDomainSpaces: "precisa ser um nome de pasta só, sem espaços, p. ex. go ou devops",
		vDomainChars:  `precisa ser um nome de pasta só, sem / \ : * ? " < > |`,
		vDomainDot:    "não pode começar nem terminar com ponto",
	},
}
