package security

import (
	"context"
	"testing"

	"github.com/gohands/gohands/event"
)

// TestEverydayDestructiveCommands checks the commands of daily work that
// lose history, data or credentials are rated HIGH, and their harmless
// neighbours are not.
func TestEverydayDestructiveCommands(t *testing.T) {
	a := &RuleAnalyzer{WorkDir: "/home/dev/app"}
	high := []string{
		"git push --force origin main",
		"git push -f",
		"git push origin +main",
		"git push --force-with-lease",
		"git -C sub push --force",
		"git reset --hard HEAD~3",
		"git reset --hard && git clean -fdx",
		"git clean -fd",
		"git branch -D feature",
		"git checkout -- .",
		"rm -rf .git",
		"rm -rf ./.git/",
		"rm -rf ../other-project",
		"rm -rf /home/dev/other",
		"rm -rf /home/dev/app",
		"psql -c 'DROP DATABASE prod;'",
		`mysql -e "drop table users"`,
		"sqlite3 app.db 'DELETE FROM users;'",
		"dropdb prod",
		"redis-cli FLUSHALL",
		"terraform destroy -auto-approve",
		"terraform apply -destroy",
		"kubectl delete namespace prod",
		"kubectl -n prod delete pods --all",
		"helm uninstall web",
		"aws s3 rm s3://bucket --recursive",
		"aws s3 rb s3://bucket --force",
		"aws ec2 terminate-instances --instance-ids i-1",
		"gcloud compute instances delete vm1",
		"docker system prune -af --volumes",
		"docker volume prune -f",
		"cat ~/.ssh/id_rsa",
		"cat /home/dev/.ssh/id_ed25519",
		"base64 ~/.ssh/id_ecdsa",
		"cat ~/.aws/credentials",
		"tar czf keys.tgz ~/.ssh",
	}
	low := []string{
		"git push origin main",
		"git push -u origin feature",
		"git reset HEAD file.go",
		"git reset --soft HEAD~1",
		"git clean -n",
		"git branch -d merged",
		"git checkout -b feature",
		"git status",
		"rm -rf build",
		"rm -rf ./node_modules",
		"rm -rf /home/dev/app/dist",
		"rm -rf /tmp/scratch",
		"rm .gitignore",
		"psql -c 'SELECT * FROM users'",
		"sqlite3 app.db 'DELETE FROM users WHERE id = 3'",
		"terraform plan",
		"terraform apply",
		"kubectl get pods",
		"aws s3 ls s3://bucket",
		"aws s3 cp a.txt s3://bucket/a.txt",
		"docker image prune",
		"docker ps",
		"cat ~/.ssh/id_rsa.pub",
		"cat ~/.ssh/known_hosts",
		"ls ~/.ssh",
	}
	ctx := context.Background()
	for _, cmd := range high {
		if r, _ := a.SecurityRisk(ctx, terminalAction(cmd)); r != event.RiskHigh {
			t.Errorf("%q rated %s, want HIGH (rules: %v)", cmd, r, ruleIDs(a, cmd))
		}
	}
	for _, cmd := range low {
		if r, _ := a.SecurityRisk(ctx, terminalAction(cmd)); r == event.RiskHigh {
			t.Errorf("%q rated HIGH by %v, want lower", cmd, ruleIDs(a, cmd))
		}
	}
	if r, _ := a.SecurityRisk(ctx, editorAction("view", "/home/dev/.ssh/id_rsa")); r != event.RiskHigh {
		t.Errorf("file_editor view of a private key rated %s, want HIGH", r)
	}
}

func ruleIDs(a *RuleAnalyzer, cmd string) []string {
	in, err := a.Input(terminalAction(cmd))
	if err != nil {
		return []string{err.Error()}
	}
	var ids []string
	for _, r := range a.Matches(in) {
		ids = append(ids, r.ID)
	}
	return ids
}

// DefaultRules is ordered most severe first, with the everyday rules among
// the HIGH ones, and returns a copy: changing it does not change what the
// analyzers check.
func TestDefaultRulesOrderAndCopy(t *testing.T) {
	rules := DefaultRules()
	seen := map[string]bool{}
	for i, r := range rules {
		rank, _ := riskRank(r.Risk)
		if prev, _ := riskRank(rules[max(i-1, 0)].Risk); rank > prev {
			t.Errorf("rule %s (%v) follows %s (%v): not most severe first", r.ID, r.Risk, rules[i-1].ID, rules[i-1].Risk)
		}
		seen[r.ID] = true
	}
	for _, r := range everydayRules() {
		if !seen[r.ID] {
			t.Errorf("everyday rule %s is missing", r.ID)
		}
	}
	rules[0].Command, rules[0].Text, rules[0].Action = nil, nil, nil
	if r := DefaultRules()[0]; r.Command == nil && r.Text == nil && r.Action == nil {
		t.Error("changing the result of DefaultRules changed the table")
	}
}
